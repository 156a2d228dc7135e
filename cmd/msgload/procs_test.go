package main

import (
	"runtime"
	"testing"
)

func TestSpareProc(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(before)
	if got := spareProc(func(string) string { return "" }); got != before+1 || runtime.GOMAXPROCS(0) != before+1 {
		t.Errorf("spareProc = %d, GOMAXPROCS %d; want %d", got, runtime.GOMAXPROCS(0), before+1)
	}
	runtime.GOMAXPROCS(before)
	// A GOMAXPROCS the user set is left alone.
	env := func(k string) string {
		if k == "GOMAXPROCS" {
			return "1"
		}
		return ""
	}
	if got := spareProc(env); got != before || runtime.GOMAXPROCS(0) != before {
		t.Errorf("with GOMAXPROCS set: spareProc = %d, GOMAXPROCS %d; want %d untouched", got, runtime.GOMAXPROCS(0), before)
	}
}
