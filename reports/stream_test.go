package reports

import (
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"testing/fstest"
	"time"

	"github.com/msgload/msgload/rundir"
)

// updateStream rewrites testdata/stream/*.summary.json from the analysis as it
// is: the goldens were written by the in-memory analysis before the bounded
// one replaced it (issue 23), so the test is the differential one.
var updateStream = flag.Bool("update-stream", false, "rewrite testdata/stream goldens")

// streamShape is a generated run of n messages: one kind of traffic the
// bounded analysis must give the same summary for.
type streamShape struct {
	name string
	gen  func(n int) *run
}

var streamShapes = []streamShape{
	{"none", func(n int) *run { return genStream(n, 1, "none", 0) }},
	{"none-retries", func(n int) *run { return genStream(n, 2, "none", 2) }},
	{"none-dups-shuffled", func(n int) *run { r := genStream(n, 3, "none", 1); dupShuffle(r, 4); return r }},
	{"none-notify-probes", func(n int) *run { return genNotifyProbes(n, 5) }},
	{"none-429", func(n int) *run { return gen429(n, 6, "none") }},
	{"none-soak-11m", func(n int) *run { r := genStream(n, 11, "none", 1); stretch(r, 66); return r }},
	{"callbacks", func(n int) *run { return genStream(n, 7, "sink", 1) }},
	{"callbacks-429", func(n int) *run { return gen429(n, 8, "sink") }},
	{"polls", func(n int) *run { return genStream(n, 9, "poll", 1) }},
	{"callbacks-replies", func(n int) *run { return genReplies(n, 17, "sink") }},
}

// genStream is n messaging sends at 1000/s from 3 clients with delivery via:
// most accepted at once, some refused (500, 400, timeouts), a few latencies
// over a second, a few txIds answered twice (collisions), retries up to
// retryMax on 500 and timeouts; with callbacks (sink) or polls, most
// delivered, some lost, late or duplicated.
func genStream(n int, seed uint64, via string, retryMax int) *run {
	rng := rand.New(rand.NewPCG(seed, 23))
	r := newRun(rundir.APIMessaging)
	r.meta.Clients = []string{"c1", "c2", "c3"}
	r.meta.Limit = rundir.Limit{}
	r.meta.Delivery = rundir.Delivery{Via: via, Grace: rundir.Duration(5 * time.Second)}
	if via == "none" {
		r.meta.Delivery.Grace = 0
	}
	r.meta.Chain = []string{"sms"}
	r.meta.Retry = rundir.Retry{On: []string{"500", "timeout"}, Max: retryMax, Backoff: rundir.Duration(100 * time.Millisecond)}
	end := float64(n) / 1000
	r.meta.AttackEnd = at(end + 1)
	r.meta.End = at(end + 7)
	for i := 1; i <= n; i++ {
		seq := int64(i)
		sec := float64(i) / 1000
		client := r.meta.Clients[i%3]
		accepted := false
		for try := 1; try <= retryMax+1; try++ {
			code, lat := 202, 0.0002+rng.ExpFloat64()*0.002
			switch x := rng.IntN(1000); {
			case x < 20:
				code = 500
			case x < 25:
				code = 400
			case x < 35:
				code, lat = 0, 30
			case x < 40:
				lat = 1 + rng.Float64()*3
			}
			t := sec + float64(try-1)*0.1
			a := r.send(seq, client, t, code, lat)
			a.Attempt, a.FirstSent = try, at(sec)
			a.Sent = a.Sent.Add(time.Duration(rng.IntN(3000)) * time.Microsecond)
			if code == 202 && rng.IntN(2000) == 0 {
				a.TxID = "tx-" + itoa(seq-1) // the service answered another message's id
			}
			if code >= 200 && code < 300 {
				accepted = true
				break
			}
			if code == 400 || !slices.Contains(r.meta.Retry.On, codeOn(code)) {
				break
			}
		}
		if !accepted || via == "none" {
			continue
		}
		done := sec + 0.5 + rng.ExpFloat64()
		switch x := rng.IntN(100); {
		case x < 3: // lost
		case x < 5:
			deliver(r, via, seq, end+8+rng.Float64()) // late
		case x < 8:
			deliver(r, via, seq, done)
			deliver(r, via, seq, done+0.2) // duplicate
		default:
			deliver(r, via, seq, done)
		}
	}
	return r
}

func codeOn(code int) string {
	if code == 0 {
		return "timeout"
	}
	return itoa(int64(code))
}

// deliver adds message seq's DELIVERED status at sec: a callback, or a poll.
func deliver(r *run, via string, seq int64, sec float64) {
	if via == "poll" {
		r.attempts = append(r.attempts, rundir.Attempt{Seq: seq, API: rundir.APIMessaging, Op: "check_status", Client: "c1",
			Attempt: 1, Intended: at(sec), Sent: at(sec), Code: 200, Latency: 0.001, Outcome: "ok", Class: "ok",
			TxID: "tx-" + itoa(seq), State: "DELIVERED", Channel: "sms"})
		return
	}
	r.callback(seq, sec, "DELIVERED", "sms", true, false)
}

// stretch makes the run k times as long (its sends k times as far apart,
// their latencies as they were): a soak, whose drift is fitted.
func stretch(r *run, k float64) {
	f := func(t time.Time) time.Time {
		if t.IsZero() {
			return t
		}
		return t0.Add(time.Duration(float64(t.Sub(t0)) * k))
	}
	for i := range r.attempts {
		a := &r.attempts[i]
		a.Intended, a.Sent, a.FirstSent = f(a.Intended), f(a.Sent), f(a.FirstSent)
	}
	r.meta.AttackEnd, r.meta.End = f(r.meta.AttackEnd), f(r.meta.End)
}

// dupShuffle shuffles the attempts and writes every k-th line twice.
func dupShuffle(r *run, k int) {
	rng := rand.New(rand.NewPCG(uint64(k), 7))
	rng.Shuffle(len(r.attempts), func(i, j int) { r.attempts[i], r.attempts[j] = r.attempts[j], r.attempts[i] })
	var out []rundir.Attempt
	for i, a := range r.attempts {
		out = append(out, a)
		if i%(k*50) == 0 {
			out = append(out, a)
		}
	}
	r.attempts = out
}

// genNotifyProbes is n notifications with delivery none, every tenth probed
// once (some answered with another id, some marked mismatched by the attacker).
func genNotifyProbes(n int, seed uint64) *run {
	rng := rand.New(rand.NewPCG(seed, 23))
	r := newRun(rundir.APINotify)
	r.meta.Limit = rundir.Limit{}
	r.meta.Delivery = rundir.Delivery{Via: "none"}
	r.meta.Probes = 0.1
	r.meta.AttackEnd = at(float64(n)/1000 + 1)
	r.meta.End = r.meta.AttackEnd
	for i := 1; i <= n; i++ {
		seq, sec := int64(i), float64(i)/1000
		r.send(seq, "c1", sec, 200, 0.001+rng.Float64()*0.01)
		if i%10 != 0 {
			continue
		}
		p := r.send(seq, "c1", sec+0.05, 200, 0.001)
		p.Attempt, p.Probe, p.FirstSent = 2, "sequential", at(sec)
		switch rng.IntN(4) {
		case 0:
			p.NotificationID = "n-other-" + itoa(seq)
		case 1:
			p.Mismatch = true
		}
	}
	return r
}

// gen429 is n messaging sends at 1000/s from 2 clients against a limit of 50
// a second: the sends past it answered 429 with a Retry-After.
func gen429(n int, seed uint64, via string) *run {
	rng := rand.New(rand.NewPCG(seed, 23))
	r := newRun(rundir.APIMessaging)
	r.meta.Clients = []string{"c1", "c2"}
	r.meta.Limit = rundir.Limit{Requests: 50, Window: rundir.Duration(time.Second), Mode: "exceed"}
	r.meta.Delivery = rundir.Delivery{Via: via, Grace: rundir.Duration(2 * time.Second)}
	r.meta.AttackEnd = at(float64(n)/1000 + 1)
	r.meta.End = at(float64(n)/1000 + 3)
	used := map[[2]int64]int{}
	for i := 1; i <= n; i++ {
		seq, sec := int64(i), float64(i)/1000
		c := int64(i % 2)
		w := [2]int64{c, int64(sec)}
		code := 202
		if used[w]++; used[w] > 50 {
			code = 429
		}
		a := r.send(seq, r.meta.Clients[c], sec, code, 0.001+rng.Float64()*0.002)
		if code == 429 {
			a.RetryAfter = "1"
		} else if via == "sink" && rng.IntN(10) > 0 {
			r.callback(seq, sec+0.3+rng.Float64(), "DELIVERED", "sms", true, false)
		}
	}
	return r
}

// streamSummary is the summary.json msgload report writes for dir.
func streamSummary(t testing.TB, dir string) []byte {
	t.Helper()
	s, err := Analyze(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Evaluate(s.thresholdExprs); err != nil {
		t.Fatal(err)
	}
	b, err := s.JSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkGolden compares got with testdata/stream/name.summary.json (or
// rewrites it with -update-stream).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	// A reason's next step names the run directory's file, and the run
	// directory is a temporary one.
	got = regexp.MustCompile(`(?:/[^ "/]+)+/(`+rundir.AttemptsFile+`)`).ReplaceAll(got, []byte("RUN/$1"))
	p := filepath.Join("testdata", "stream", name+".summary.json")
	if *updateStream {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: summary.json differs from the in-memory analysis's: %s", name, firstDiff(got, want))
	}
}

// TestStreamDifferential: the bounded analysis gives summary.json byte for
// byte as the in-memory analysis did (its goldens), on every run in testdata
// and on generated runs of 10,000 messages of every shape.
func TestStreamDifferential(t *testing.T) {
	runs, err := os.ReadDir(filepath.Join("testdata", "runs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range runs {
		t.Run("testdata/"+e.Name(), func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "runs", e.Name()))); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "testdata-"+e.Name(), streamSummary(t, dir))
		})
	}
	for _, sh := range streamShapes {
		t.Run(sh.name, func(t *testing.T) {
			checkGolden(t, fmt.Sprintf("gen-%s-10k", sh.name), streamSummary(t, sh.gen(10_000).write(t)))
		})
	}
}

// TestStreamDifferentialSpilled: the same with the answered ids spilled to
// disk in runs of 1,000 and merged (the external sort of a long run).
func TestStreamDifferentialSpilled(t *testing.T) {
	defer func(n int) { spillChunk = n }(spillChunk)
	spillChunk = 1000
	for _, sh := range streamShapes[:6] {
		t.Run(sh.name, func(t *testing.T) {
			dir := sh.gen(10_000).write(t)
			if !twoPasses(os.DirFS(dir)) {
				t.Fatalf("%s is not analysed in passes", sh.name)
			}
			checkGolden(t, fmt.Sprintf("gen-%s-10k", sh.name), streamSummary(t, dir))
		})
	}
}

// TestBoundedHoldsFewMessages: a run with delivery none holds a message
// with one or two records only while one is still to be read (the census
// counted them), one with three or more to the end, and no map of the ids
// answered: a message costs 2 bits once settled, not a msg and two map
// entries (issue 23: 18 M messages in 64 MB).
func TestBoundedHoldsFewMessages(t *testing.T) {
	r := genStream(10_000, 2, "none", 2) // a message's retries follow its first try in the file
	records := map[int64]int{}
	for _, at := range r.attempts {
		records[at.Seq]++
	}
	many := 0
	for _, n := range records {
		if n >= 3 {
			many++
		}
	}
	dir := r.write(t)
	st := passState(t, dir)
	a, err := analyzeOnce(os.DirFS(dir), dir, false, st)
	if err != nil {
		t.Fatal(err)
	}
	if a.msgs.n != 0 || len(a.fly) != 0 || st.maxFlying > many+1 || many == 0 {
		t.Errorf("%d messages held in msgs, %d flying at the end, %d at most: want none, none and %d (the %d with three records or more, and one)", a.msgs.n, len(a.fly), st.maxFlying, many+1, many)
	}
	if len(a.idOwner) > 0 || len(a.seenAttempts) > 0 {
		t.Errorf("%d ids and %d attempts held: want none (the first pass spills the ids)", len(a.idOwner), len(a.seenAttempts))
	}
	s, err := AnalyzeFS(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Idempotency.IDCollisions == 0 || s.Idempotency.Retries == 0 {
		t.Errorf("idempotency %+v: the run has collisions and retries", s.Idempotency)
	}
}

// growingFS is a run directory whose attempts.jsonl grows after it is first
// opened: more, a retry of a message that had one record and new messages.
type growingFS struct {
	fs    fstest.MapFS
	more  []byte
	opens int
	file  string // the file that grows: attempts.jsonl when ""
}

func (g *growingFS) Open(name string) (fs.File, error) {
	if name == cmp.Or(g.file, rundir.AttemptsFile) {
		if g.opens++; g.opens == 2 {
			f := g.fs[name]
			f.Data = append(slices.Clip(f.Data), g.more...)
		}
	}
	return g.fs.Open(name)
}

// TestBoundedReadsOneCut: the passes over a run still being written (the
// live analysis, a checkpoint) read attempts.jsonl as it was when the
// analysis began — a line written between the passes would make a message
// settled at its only record count twice, or the passes disagree.
func TestBoundedReadsOneCut(t *testing.T) {
	r := genStream(2_000, 12, "none", 0)
	dir := r.write(t)
	base, err := os.ReadFile(filepath.Join(dir, rundir.AttemptsFile))
	if err != nil {
		t.Fatal(err)
	}
	want := streamSummary(t, dir)
	more := slices.Clone(r.attempts[:1])
	more[0].Attempt = 2 // a retry of message 1
	r.attempts = append(more, r.attempts[:50]...)
	for i := 1; i < len(r.attempts); i++ {
		r.attempts[i].Seq += 10_000 // new messages
	}
	var b bytes.Buffer
	for _, at := range r.attempts {
		line, _ := json.Marshal(at)
		b.Write(append(line, '\n'))
	}
	g := &growingFS{fs: fstest.MapFS{}, more: b.Bytes()}
	if err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(os.DirFS(dir), p)
		g.fs[p] = &fstest.MapFile{Data: data, Mode: 0o644}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	g.fs[rundir.AttemptsFile].Data = base
	s, err := AnalyzeFS(g, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Evaluate(s.thresholdExprs); err != nil {
		t.Fatal(err)
	}
	got, err := s.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if g.opens < 3 {
		t.Fatalf("attempts.jsonl opened %d times: not analysed in passes", g.opens)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the analysis read lines written after it began: %s", firstDiff(got, want))
	}
}

// TestHashSpillTwice: the ids kept for the collision check are those given
// to two messages, not an id answered twice to one (every probe of a
// notification is answered its message's id: a run probing every message
// would hold every id), in memory and spilled.
func TestHashSpillTwice(t *testing.T) {
	defer func(n int) { spillChunk = n }(spillChunk)
	for _, chunk := range []int{1 << 17, 2} {
		spillChunk = chunk
		s := &hashSpill{}
		for _, p := range [][2]int64{{7, 1}, {5, 4}, {7, 1}, {9, 2}, {5, 4}, {9, 3}, {11, 6}, {9, 2}} {
			if err := s.add(uint64(p[0]), p[1]); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.twice()
		s.close()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := got[9]; len(got) != 1 || !ok {
			t.Errorf("chunk %d: %v, want only 9 (given to messages 2 and 3)", chunk, got)
		}
	}
}

// TestBoundedChartsHoldNoValues: the request latency drawn per time bucket
// (report.html) is the same in a run analysed in passes as in the one-pass
// analysis; both keep a fixed summary a bucket (chartHist,
// TestChartHistHeldFixed), no value one by one.
func TestBoundedChartsHoldNoValues(t *testing.T) {
	dir := genStream(10_000, 2, "none", 2).write(t) // 1% timeouts of 30 s, latencies of 1 to 4 s
	if !twoPasses(os.DirFS(dir)) {
		t.Fatal("not analysed in passes")
	}
	a, err := analyzeBounded(os.DirFS(dir), dir, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.ch.lat) == 0 {
		t.Fatal("no latency charted")
	}
	once, err := analyzeOnce(os.DirFS(dir), dir, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		name      string
		got, want []float64
	}{{"p50", a.ch.LatP50, once.ch.LatP50}, {"p95", a.ch.LatP95, once.ch.LatP95}, {"p99", a.ch.LatP99, once.ch.LatP99}} {
		if !slices.EqualFunc(s.got, s.want, func(x, y float64) bool { return x == y || x != x && y != y }) {
			t.Errorf("%s per bucket %v, one pass %v", s.name, s.got, s.want)
		}
	}
}

// TestBoundedCallbacksAgree: a run with callbacks is analysed in passes too
// (issue 23), its summary.json the same to the byte as the one-pass
// analysis's, on every generated shape and every run in testdata that is
// analysed in passes.
func TestBoundedCallbacksAgree(t *testing.T) {
	dirs := map[string]string{}
	for _, sh := range streamShapes {
		dirs[sh.name] = sh.gen(10_000).write(t)
	}
	dirs["failover"] = genFailover(3_000).write(t)
	runs, err := os.ReadDir(filepath.Join("testdata", "runs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range runs {
		dirs["testdata/"+e.Name()] = filepath.Join("testdata", "runs", e.Name())
	}
	for _, name := range []string{"callbacks", "callbacks-429", "failover", "polls"} {
		if _, err := countSeqs(os.DirFS(dirs[name])); !twoPasses(os.DirFS(dirs[name])) || err != nil {
			t.Errorf("%s is not analysed in passes (census: %v)", name, err)
		}
	}
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			if !twoPasses(os.DirFS(dir)) {
				t.Skip("analysed in one pass")
			}
			once, err := analyzeOnce(os.DirFS(dir), dir, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := marshalled(t, once.s)
			got, err := AnalyzeFS(os.DirFS(dir), dir)
			if err != nil {
				t.Fatal(err)
			}
			if g := marshalled(t, got); !bytes.Equal(g, want) {
				t.Errorf("summary.json differs from the one-pass analysis's: %s", firstDiff(g, want))
			}
		})
	}
}

// marshalled is s's summary.json, its thresholds judged.
func marshalled(t *testing.T, s *Summary) []byte {
	t.Helper()
	if err := s.Evaluate(s.thresholdExprs); err != nil {
		t.Fatal(err)
	}
	b, err := s.JSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBoundedCallbacksHoldFew: a run with callbacks analysed in passes reads
// its attempts and callbacks merged in time, and holds a message only from
// its send to its last callback: at 1,000 messages a second, their callbacks
// 0.5 s + Exp(1 s) after the send (2% late, at the end), a few thousand at
// once, not every accepted message until events.jsonl is read; and the
// records of the messages settled are let go.
func TestBoundedCallbacksHoldFew(t *testing.T) {
	const n = 20_000
	r := genStream(n, 7, "sink", 1)
	// In the order they arrived, as the sink writes them.
	slices.SortStableFunc(r.events, func(x, y rundir.Event) int { return x.ReceivedAt.Compare(y.ReceivedAt) })
	dir := r.write(t)
	st := passState(t, dir)
	a, err := analyzeOnce(os.DirFS(dir), dir, false, st)
	if err != nil {
		t.Fatal(err)
	}
	if a.msgs.n != 0 || len(a.fly) != 0 || st.maxFlying == 0 || st.maxFlying > n/5 {
		t.Errorf("%d messages held in msgs, %d flying at the end, %d at most: want none, none and at most %d", a.msgs.n, len(a.fly), st.maxFlying, n/5)
	}
	if slots := st.maxRecords; slots > 2*st.maxFlying {
		t.Errorf("%d record places made for %d messages flying at most: the records of settled messages are not let go", slots, st.maxFlying)
	}
	t.Logf("%d messages flying at most, %d record places", st.maxFlying, st.maxRecords)
}

// TestBoundedCallbacksReadOneCut: a run with callbacks analysed in passes
// reads events.jsonl as it was when the analysis began, as attempts.jsonl
// (a live analysis, a checkpoint): a callback written after, a duplicate of
// one read or of a message not sent, changes no figure and no count of the
// census (a message would be settled twice, or never).
func TestBoundedCallbacksReadOneCut(t *testing.T) {
	r := genStream(2_000, 13, "sink", 1)
	dir := r.write(t)
	want := streamSummary(t, dir)
	late := []rundir.Event{r.events[0], r.events[len(r.events)/2], r.events[0]}
	late[2].Corr = &rundir.Correlation{Key: "tx-x", Run: r.meta.ID, Seq: 9_999, State: "DELIVERED", Channel: "sms", Terminal: true}
	var b bytes.Buffer
	for _, e := range late {
		line, _ := json.Marshal(e)
		b.Write(append(line, '\n'))
	}
	g := &growingFS{fs: fstest.MapFS{}, more: b.Bytes(), file: rundir.EventsFile}
	if err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(os.DirFS(dir), p)
		g.fs[p] = &fstest.MapFile{Data: data, Mode: 0o644}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	s, err := AnalyzeFS(g, dir)
	if err != nil {
		t.Fatal(err)
	}
	if g.opens < 3 {
		t.Fatalf("events.jsonl opened %d times: not analysed in passes", g.opens)
	}
	if got := marshalled(t, s); !bytes.Equal(got, want) {
		t.Errorf("the analysis read callbacks written after it began: %s", firstDiff(got, want))
	}
}

// genFailover is n messages at 100/s on the chain viber:DELIVERED → sms,
// their callbacks in arrival order: the first 300 with none (lost on viber,
// settled in a stream before any message steps to sms: their time is
// censored in that step all the same), then delivered on viber, stepped
// (EXPIRED) and delivered on sms, or stepped and lost on sms.
func genFailover(n int) *run {
	r := newRun(rundir.APIMessaging)
	r.meta.Target = "http://127.0.0.1:8080"
	r.meta.Chain = []string{"viber:DELIVERED", "sms"}
	r.meta.Delivery = rundir.Delivery{Via: "sink", Grace: rundir.Duration(20 * time.Second)}
	r.meta.AttackEnd = at(float64(n)/100 + 1)
	r.meta.End = at(float64(n)/100 + 21)
	for i := 1; i <= n; i++ {
		sec := float64(i) / 100
		a := r.send(int64(i), "c1", sec, 202, 0.01)
		a.FirstSent = a.Sent
	}
	for i := 301; i <= n; i++ {
		sec := float64(i) / 100
		switch i % 3 {
		case 0:
			r.callback(int64(i), sec+1+float64(i%7)/10, "DELIVERED", "viber", true, false)
		case 1:
			r.callback(int64(i), sec+2, "EXPIRED", "viber", false, false)
			r.callback(int64(i), sec+3+float64(i%5)/10, "DELIVERED", "sms", true, false)
		default:
			r.callback(int64(i), sec+2+float64(i%11)/10, "NOT_DELIVERED", "viber", false, false)
		}
	}
	slices.SortStableFunc(r.events, func(x, y rundir.Event) int { return x.ReceivedAt.Compare(y.ReceivedAt) })
	return r
}

// passState is the state of a run analysed in passes (stream.go) as the
// hold-few tests drive analyzeOnce with it: the census counted, the
// answered ids' spill closed when the test ends.
func passState(t *testing.T, dir string) *streamRun {
	t.Helper()
	st := &streamRun{ids: &hashSpill{}}
	t.Cleanup(st.ids.close)
	var err error
	if st.census, err = countSeqs(os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestCensusCountsALineTheAnalysisCannotRead: the census reads only each
// line's sequence (decodeSeq), so it counts a line that names one but does
// not decode (a time that does not parse, a value of the wrong type, a torn
// last line) as a record. The message it names then waits for a record that
// never comes and is settled at the end (landAll), never twice: the bounded
// analysis still gives the one pass's summary.json byte for byte.
func TestCensusCountsALineTheAnalysisCannotRead(t *testing.T) {
	for _, sh := range []streamShape{streamShapes[0], streamShapes[1], streamShapes[6]} {
		t.Run(sh.name, func(t *testing.T) {
			dir := sh.gen(2_000).write(t)
			p := filepath.Join(dir, rundir.AttemptsFile)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			lines := bytes.SplitAfter(b, []byte("\n"))
			bad := [][]byte{
				[]byte(`{"seq":7,"op":"send","attempt":2,"sent":"yesterday","code":200}` + "\n"),
				[]byte(`{"seq":8,"code":"two hundred"}` + "\n"),
				[]byte(`{"seq":1999,"op":"send","attempt":1,"sent":"2026-11-23T15:36:16Z","code":2` + "\n"), // torn
				[]byte(`{"seq":5000,"latency_s":"slow"}` + "\n"),                                            // a message never sent
			}
			var out []byte
			for i, l := range lines {
				out = append(out, l...)
				if i%500 == 250 && len(bad) > 0 {
					out, bad = append(out, bad[0]...), bad[1:]
				}
			}
			for _, l := range bad {
				out = append(out, l...)
			}
			if err := os.WriteFile(p, out, 0o644); err != nil {
				t.Fatal(err)
			}
			census, err := countSeqs(os.DirFS(dir))
			if err != nil {
				t.Fatal(err)
			}
			if census.get(5000) != 1 || census.get(8) < 2 {
				t.Fatalf("the census did not count the unreadable lines: seq 5000 %d, seq 8 %d", census.get(5000), census.get(8))
			}
			once, err := analyzeOnce(os.DirFS(dir), dir, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := marshalled(t, once.s)
			if !twoPasses(os.DirFS(dir)) {
				t.Fatal("not analysed in passes")
			}
			got, err := AnalyzeFS(os.DirFS(dir), dir)
			if err != nil {
				t.Fatal(err)
			}
			if g := marshalled(t, got); !bytes.Equal(g, want) {
				t.Errorf("summary.json differs from the one-pass analysis's: %s", firstDiff(g, want))
			}
			if got.Requests.BadLines != 4 {
				t.Errorf("bad lines %d, want the 4 written", got.Requests.BadLines)
			}
		})
	}
}
