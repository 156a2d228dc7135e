// Package depcheck lists what a package links (`go list -deps`), for the
// tests that hold msgload's layering: the body generator links neither the
// reports nor the threshold language, scenario loading links the summary
// contract but no analysis or writer, the contract links nothing beyond the
// expression engine, the analysis (reports) links no HTML template or chart
// package — only its writers (reports/render) do.
package depcheck

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Deps returns the packages outside the standard library that pkg links,
// directly or through what it imports, itself last. It skips t when no go
// command is on PATH.
func Deps(t testing.TB, pkg string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 || deps[len(deps)-1] != pkg {
		t.Fatalf("go list -deps did not list %s last: %q", pkg, deps)
	}
	return deps
}

// Std returns every package pkg links, the standard library's too, itself
// last: for a guard on a standard package (html/template) that Deps leaves out.
func Std(t testing.TB, pkg string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// NotLinked fails t for each of packages (import paths, the standard
// library's too) that pkg links.
func NotLinked(t testing.TB, pkg string, packages []string) {
	t.Helper()
	deps := Std(t, pkg)
	for _, p := range packages {
		if slices.Contains(deps, p) {
			t.Errorf("%s links %s", pkg, p)
		}
	}
}

// Forbidden fails t for each package pkg links whose path starts with one of
// forbidden (case folded) and is not one of allowed.
func Forbidden(t testing.TB, pkg string, forbidden, allowed []string) {
	t.Helper()
	for _, d := range Deps(t, pkg) {
		for _, bad := range forbidden {
			if strings.HasPrefix(strings.ToLower(d), strings.ToLower(bad)) && !slices.Contains(allowed, d) {
				t.Errorf("%s links %s (forbidden: %s)", pkg, d, bad)
			}
		}
	}
}

// Only fails t for each package pkg links that starts with none of allowed:
// the whole list of what a package may link.
func Only(t testing.TB, pkg string, allowed []string) {
	t.Helper()
	for _, d := range Deps(t, pkg) {
		if !hasPrefix(d, allowed) {
			t.Errorf("%s links %s, which is none of %q", pkg, d, allowed)
		}
	}
}

// hasPrefix says whether s starts with one of prefixes.
func hasPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
