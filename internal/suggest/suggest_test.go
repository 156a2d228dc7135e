package suggest

import (
	"strings"
	"testing"
)

func TestNearest(t *testing.T) {
	names := []string{"duration", "requests", "rate", "profile"}
	for _, tt := range []struct {
		got, want string
		d         int
	}{
		{"duraton", "duration", 1},
		{"DURATION", "duration", 0},
		{"rat", "rate", 1},
		{"zzzzzzzz", "", 3},
		{strings.Repeat("r", 65), "", 3},
	} {
		got, d := Nearest(tt.got, names, 2)
		if got != tt.want || (tt.want != "" && d != tt.d) {
			t.Errorf("Nearest(%q) = %q, %d; want %q, %d", tt.got, got, d, tt.want, tt.d)
		}
	}
	// Ties go to the first name in sort order, whatever the list's order.
	if got, _ := Nearest("ab", []string{"ac", "aa"}, 2); got != "aa" {
		t.Errorf("tie: %q, want aa", got)
	}
	for _, tt := range []struct {
		a, b string
		d    int
	}{
		{"привет", "привте", 1}, // non-ASCII names count characters; a swap is one edit
		{"привет", "пр", 4},
		{"rnu", "run", 1},
		{"ab", "ba", 1},
		{"abc", "ca", 3}, // optimal string alignment: a swapped pair is not edited again
		{"kitten", "sitting", 3},
		{"", "run", 3},
	} {
		if d := distance(tt.a, tt.b); d != tt.d {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, d, tt.d)
		}
	}
}

func TestNearestPaths(t *testing.T) {
	paths := []string{"requests.latency.p95", "delivery.lost", "delivery.latency.p95", "rate_limit.excess_accepted", "a.p95", "b.p95"}
	for _, tt := range []struct {
		got  string
		most int
		want string
		d    int
	}{
		{"lost", 3, "delivery.lost", 0},
		{"excess_acepted", 3, "rate_limit.excess_accepted", 1},
		{"p95", 3, "requests.latency.p95 delivery.latency.p95 a.p95", 0}, // the first three, in order
		{"p95", 1, "requests.latency.p95", 0},
		{"zzzzzz", 3, "", 0},
	} {
		got, d := NearestPaths(tt.got, paths, tt.most)
		if strings.Join(got, " ") != tt.want || (tt.want != "" && d != tt.d) {
			t.Errorf("NearestPaths(%q, %d) = %q, %d; want %q, %d", tt.got, tt.most, got, d, tt.want, tt.d)
		}
	}
}
