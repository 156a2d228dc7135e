// Package benchload is msgload's side of the attack benchmark
// (attack.BenchmarkVersusVegeta): attack.Run against a URL at a constant
// rate with unique messaging bodies, Basic auth, metrics and the attempt log
// (attempts.jsonl and results.bin), then one JSON line with what was sent.
// Its command (./benchload) is a program of its own, like the vegeta CLI it is
// compared with, so its CPU time and memory are the attack path's and not a
// test binary's.
package benchload
