package suggest

import (
	"strings"
)

// maxLen bounds the names compared: the distance is quadratic in their
// length, and a key in a file under test can be of any length.
const maxLen = 64

// distance is the edit distance of a and b in characters, ignoring case,
// with two neighbours swapped counted as one edit (optimal string alignment:
// "rnu" is one slip from "run", as "runn" is); names longer than 64 bytes are
// far from everything.
func distance(a, b string) int {
	if len(a) > maxLen || len(b) > maxLen {
		return maxLen + 1
	}
	x, y := []rune(strings.ToLower(a)), []rune(strings.ToLower(b))
	// d[i][j] is the distance of x[:i] and y[:j].
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

// NearestPaths returns the dotted paths whose last name is nearest to got
// (within a third of its length, plus one), at most most of them, in the
// order of paths, and their distance; nil when none is near. It finds a name
// written without its object, or at the wrong level ("lost" →
// delivery.lost).
func NearestPaths(got string, paths []string, most int) ([]string, int) {
	var near []string
	best := len(got)/3 + 2
	for _, p := range paths {
		d := distance(got, p[strings.LastIndexByte(p, '.')+1:])
		switch {
		case d < best:
			best, near = d, []string{p}
		case d == best && len(near) < most:
			near = append(near, p)
		}
	}
	return near, best
}

// Nearest returns the name of names nearest to got and its distance, or ""
// when none is within limit; ties go to the name first in sort order.
func Nearest(got string, names []string, limit int) (string, int) {
	best, bestD := "", limit+1
	for _, n := range names {
		d := distance(got, n)
		if d < bestD || d == bestD && n < best {
			best, bestD = n, d
		}
	}
	return best, bestD
}
