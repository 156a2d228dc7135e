// Command residentpages tells which packages own the resident pages of a
// running Go executable: the file-backed part of its RSS (RssFile), by ELF
// section and by the package of the symbols on each resident page (a page
// shared by several symbols is split by their bytes on it). Linux only; reads
// /proc/PID/maps and /proc/PID/pagemap (root, or CAP_SYS_ADMIN, for the
// present bits) and the executable's symbols through `go tool nm`.
//
//	go run ./scripts/residentpages PID /path/to/the/executable
//
// The kernel maps up to 16 pages around each faulted one of a file mapping
// (fault-around), so a few scattered reads make whole 64 KiB regions resident:
// a big executable whose init and hot paths touch many packages has many.
package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
)

type sym struct {
	addr, size uint64
	name       string
}

// pkgOf is the package of a symbol name ("net/http.(*Transport).RoundTrip" →
// "net/http"); the linker's own symbols ("go:func.*", "type:…") are their prefix.
func pkgOf(n string) string {
	for _, p := range []string{"go:", "type:"} {
		if strings.HasPrefix(n, p) {
			return p
		}
	}
	last := strings.LastIndex(n, "/")
	if i := strings.Index(n[last+1:], "."); i >= 0 {
		return n[:last+1+i]
	}
	return n
}

// sec is an ELF section of the executable.
type sec struct {
	name       string
	addr, size uint64
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: residentpages PID EXECUTABLE")
		os.Exit(2)
	}
	pid, bin := os.Args[1], os.Args[2]
	syms, err := symbols(bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "go tool nm:", err)
		os.Exit(1)
	}
	byPkg, bySec, err := resident(pid, bin, syms, sections(bin))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	report(byPkg, bySec)
}

// symbols are the executable's symbols with their sizes, by address.
func symbols(bin string) ([]sym, error) {
	out, err := exec.Command("go", "tool", "nm", "-size", "-sort", "address", bin).Output()
	if err != nil {
		return nil, err
	}
	var syms []sym
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 4 {
			continue
		}
		a, _ := strconv.ParseUint(f[0], 16, 64)
		sz, _ := strconv.ParseUint(f[1], 10, 64)
		syms = append(syms, sym{a, sz, strings.Join(f[3:], " ")})
	}
	sort.Slice(syms, func(i, j int) bool { return syms[i].addr < syms[j].addr })
	return syms, nil
}

// sections are the executable's allocated sections (readelf -SW).
func sections(bin string) []sec {
	secOut, _ := exec.Command("readelf", "-SW", bin).Output()
	var secs []sec
	for _, l := range strings.Split(string(secOut), "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "[") {
			continue
		}
		l = l[strings.Index(l, "]")+1:]
		f := strings.Fields(l)
		if len(f) < 5 {
			continue
		}
		a, _ := strconv.ParseUint(f[2], 16, 64)
		sz, _ := strconv.ParseUint(f[4], 16, 64)
		if a != 0 {
			secs = append(secs, sec{f[0], a, sz})
		}
	}
	return secs
}

// resident walks the executable's mappings of process pid and counts its
// resident pages: KiB by "section:package" (a page split by its symbols'
// bytes) and pages by section.
func resident(pid, bin string, syms []sym, secs []sec) (map[string]float64, map[string]int, error) {
	maps, err := os.Open("/proc/" + pid + "/maps")
	if err != nil {
		return nil, nil, err
	}
	pm, err := os.Open("/proc/" + pid + "/pagemap")
	if err != nil {
		return nil, nil, err
	}
	byPkg := map[string]float64{}
	bySec := map[string]int{}
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[5] != bin {
			continue
		}
		r := strings.Split(f[0], "-")
		lo, _ := strconv.ParseUint(r[0], 16, 64)
		hi, _ := strconv.ParseUint(r[1], 16, 64)
		buf := make([]byte, 8)
		for p := lo; p < hi; p += 4096 {
			pm.ReadAt(buf, int64(p/4096*8))
			e := binary.LittleEndian.Uint64(buf)
			if e&(1<<63) == 0 {
				continue
			}
			sname := "?"
			for _, s := range secs {
				if p+4096 > s.addr && p < s.addr+s.size {
					sname = s.name
				}
			}
			bySec[sname]++
			attribute(byPkg, sname, p, syms)
		}
	}
	return byPkg, bySec, nil
}

// attribute shares the 4 KiB of the resident page at p among the packages of
// the symbols on it, by their bytes.
func attribute(byPkg map[string]float64, sname string, p uint64, syms []sym) {
	i := sort.Search(len(syms), func(i int) bool { return syms[i].addr+syms[i].size > p })
	var names []string
	var weights []uint64
	var tot uint64
	for ; i < len(syms) && syms[i].addr < p+4096; i++ {
		s := syms[i]
		lo2, hi2 := max(s.addr, p), min(s.addr+s.size, p+4096)
		if hi2 <= lo2 {
			continue
		}
		names = append(names, pkgOf(s.name))
		weights = append(weights, hi2-lo2)
		tot += hi2 - lo2
	}
	if tot == 0 {
		byPkg[sname+":(nosym)"] += 4
		return
	}
	for k, n := range names {
		byPkg[sname+":"+n] += 4 * float64(weights[k]) / float64(tot)
	}
}

// report writes the sections' resident KiB, then the 60 largest packages.
func report(byPkg map[string]float64, bySec map[string]int) {
	secNames := make([]string, 0, len(bySec))
	for k := range bySec {
		secNames = append(secNames, k)
	}
	sort.Slice(secNames, func(i, j int) bool { return bySec[secNames[i]] > bySec[secNames[j]] })
	for _, k := range secNames {
		fmt.Printf("section %-14s %6d KiB\n", k, bySec[k]*4)
	}
	type kv struct {
		k string
		v float64
	}
	var kvs []kv
	for k, v := range byPkg {
		kvs = append(kvs, kv{k, v})
	}
	sort.Slice(kvs, func(i, j int) bool { return kvs[i].v > kvs[j].v })
	for _, x := range kvs[:min(60, len(kvs))] {
		fmt.Printf("%8.0f KiB %s\n", x.v, x.k)
	}
}
