package render

import "testing"

// BenchmarkBuildNone100k: Build (analysis and the four report files)
// of a 100,000-message run with delivery: none — the report phase of the
// whole-run benchmark at 5000/s for 20 s.
func BenchmarkBuildNone100k(b *testing.B) {
	dir := noneRun(100_000).write(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s, err := Build(dir)
		if err != nil {
			b.Fatal(err)
		}
		if s.Requests.Accepted != 100_000 {
			b.Fatalf("accepted %d", s.Requests.Accepted)
		}
	}
}
