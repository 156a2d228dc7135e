package grafana

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/msgload/msgload/harness"
	"github.com/msgload/msgload/internal/testnet"
	"github.com/msgload/msgload/scenarios"
)

// e2eSecond is the other run of TestDashboardsFollowTheRun: one part (its
// series carry no part label), notify only, its own scenario name, over a
// limit so it has 429 answers of its own.
const e2eSecond = `
name: e2e-second
api: notify
target: embedded
clients: 1
load: { profile: constant, rate: 5/s, duration: 6s }
limit: { rate: 10/5s, mode: exceed }
message: { recipient: "+7999{0000000-9999999}" }
idempotency: { probes: 20% }
delivery: { via: sink, grace: 5s }
sim:
  rateLimit: { rate: 10/5s, algorithm: sliding }
  callbacks: { duplicate: 20% }
`

// followRun is one `msgload run` of the test: its scenario, its
// --metrics-addr and, once it ran, its id.
type followRun struct {
	name, scenario, addr, id string
}

// TestDashboardsFollowTheRun runs two msgload runs at the same time, each
// serving /metrics on its own address (two instances of one job), scraped by a
// real Prometheus. For every panel and annotation query of every dashboard,
// with the variables substituted as Grafana would (run_id: one run, or every
// run of the time range ticked; the other variables at their default, All),
// it proves that selecting a run reads that run's series only and that
// selecting all reads both:
//
//   - a TSDB snapshot is loaded into a second Prometheus; the first deletes
//     run b's series, the second run a's;
//   - a's query returns exactly what it returned before where only b's series
//     are gone, and nothing where only b's series are left; the same for b;
//   - the all-runs query returns a's answer where only a's series are left,
//     and b's where only b's are;
//   - then, with run a alone, selecting its part msg does not change when
//     the part ntf's series are deleted, and selecting ntf returns nothing.
//
// The runs overlap in time, so a filter by time alone would fail.
func TestDashboardsFollowTheRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two runs and two real Prometheus servers; not in -short")
	}
	needProgram(t, "/usr/bin/prometheus")
	runs := []*followRun{
		{name: "a", scenario: e2eScenario, addr: testnet.FreeAddr(t)},
		{name: "b", scenario: e2eSecond, addr: testnet.FreeAddr(t)},
	}
	var sources []source
	for _, r := range runs {
		sources = append(sources, source{job: "msgload", url: "http://" + r.addr})
	}
	p := startPrometheusOn(t, sources, "", "--web.enable-admin-api")

	start := time.Now()
	var wg sync.WaitGroup
	for _, r := range runs {
		s, err := scenarios.Parse("e2e-"+r.name+".yaml", t.TempDir(), []byte(r.scenario), func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var stderr bytes.Buffer
			res, err := harness.Run(ctx, harness.Options{
				Scenario: s, Out: t.TempDir(), Stdout: io.Discard, Stderr: &stderr,
				MetricsAddr: r.addr, MetricsLinger: 30 * time.Second, Version: "test",
			})
			if err != nil {
				t.Errorf("run %s: %v\n%s", r.name, err, stderr.String())
				return
			}
			r.id = res.ID
			for _, pt := range res.Parts {
				if pt.Err != nil {
					t.Errorf("run %s part %s: %v\n%s", r.name, pt.Name, pt.Err, stderr.String())
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	// Each run stops serving once Prometheus scraped it after its end; wait
	// until both targets are seen down, so every sample is in.
	p.waitFor(t, "both runs' targets down", 60*time.Second, func() bool {
		return p.instant(t, `count(up{job="msgload"} == 0)`) == 2
	})
	end := time.Now()
	step := time.Second
	a, b := runs[0], runs[1]
	t.Logf("runs: a %s, b %s", a.id, b.id)

	// The run_id options, as Grafana lists them over the time range, newest first.
	ids, err := p.labelValues("run_id", runInfoMetric, start.Add(-time.Minute), end)
	if err != nil {
		t.Fatal(err)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	if len(ids) != 2 || !contains2(ids, a.id) || !contains2(ids, b.id) {
		t.Fatalf("run_id lists %v, want both runs %s and %s", ids, a.id, b.id)
	}

	ds, err := loadDashboards(Files)
	if err != nil {
		t.Fatal(err)
	}
	type check struct {
		where string
		exprs map[string]string        // selection → expanded query
		got   map[string][]rangeSeries // selection → answer with both runs' series
	}
	selections := map[string][]string{"a": {a.id}, "b": {b.id}, "all": ids}
	var checks []*check
	for _, d := range ds {
		for _, q := range d.Queries() {
			if q.Variable {
				continue
			}
			c := &check{where: d.UID + ": " + q.Where, exprs: map[string]string{}, got: map[string][]rangeSeries{}}
			for sel, runIDs := range selections {
				c.exprs[sel] = expand(q.Expr, grafanaVariables(t, d, runIDs), step, end.Sub(start))
			}
			checks = append(checks, c)
		}
	}
	query := func(p *promServer, expr string) []rangeSeries {
		t.Helper()
		res, err := p.queryRange(expr, start.Add(-5*time.Second), end, step)
		if err != nil {
			t.Fatalf("%v\n  %s", err, expr)
		}
		return res
	}
	for _, c := range checks {
		for sel, expr := range c.exprs {
			c.got[sel] = query(p, expr)
		}
		if finiteSamples(c.got["a"]) == 0 && finiteSamples(c.got["b"]) == 0 {
			t.Errorf("%s: no data for either run, nothing proven:\n  %s", c.where, c.exprs["a"])
		}
	}

	// The same data twice: p keeps run a's series only, q run b's.
	q := startPrometheusOn(t, nil, tsdbSnapshot(t, p), "--web.enable-admin-api")
	deleteSeries(t, p, b.addr)
	deleteSeries(t, q, a.addr)
	for _, c := range checks {
		onlyA := map[string][]rangeSeries{}
		onlyB := map[string][]rangeSeries{}
		for sel, expr := range c.exprs {
			onlyA[sel] = query(p, expr)
			onlyB[sel] = query(q, expr)
		}
		failed := false
		same := func(what string, got, want []rangeSeries) {
			if d := diffSeries(got, want); d != "" {
				t.Errorf("%s: %s: %s", c.where, what, d)
				failed = true
			}
		}
		same("run a selected, run b's series deleted: changed", onlyA["a"], c.got["a"])
		same("run b selected, run a's series deleted: changed", onlyB["b"], c.got["b"])
		same("run a selected, only run b's series left: returned some", onlyB["a"], nil)
		same("run b selected, only run a's series left: returned some", onlyA["b"], nil)
		same("all runs selected, only run a's series left: not run a's answer", onlyA["all"], c.got["a"])
		same("all runs selected, only run b's series left: not run b's answer", onlyB["all"], c.got["b"])
		if failed {
			t.Logf("%s queries:\n  a:   %s\n  b:   %s\n  all: %s", c.where, c.exprs["a"], c.exprs["b"], c.exprs["all"])
		}
	}
	t.Logf("%d queries checked", len(checks))

	// The part: p now holds run a only, whose two parts are msg and ntf.
	// Selecting msg must not change when ntf's series go, and selecting ntf
	// must then return nothing.
	parts, err := p.labelValues(partVariable, runInfoMetric, start.Add(-time.Minute), end)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(parts, " ") != "msg ntf" {
		t.Fatalf("run a's parts: %v, want msg ntf", parts)
	}
	type partCheck struct {
		where, msg, ntf string
		got             []rangeSeries
	}
	var pcs []*partCheck
	for _, d := range ds {
		for _, q := range d.Queries() {
			if q.Variable {
				continue
			}
			vars := grafanaVariables(t, d, []string{a.id})
			pc := &partCheck{where: d.UID + ": " + q.Where}
			for _, v := range d.Templating.List {
				if v.Name == partVariable {
					vars[partVariable] = grafanaFormat(v, []string{"msg"})
					pc.msg = expand(q.Expr, vars, step, end.Sub(start))
					vars[partVariable] = grafanaFormat(v, []string{"ntf"})
					pc.ntf = expand(q.Expr, vars, step, end.Sub(start))
				}
			}
			pc.got = query(p, pc.msg)
			pcs = append(pcs, pc)
		}
	}
	resp, err := p.client.PostForm(p.url+"/api/v1/admin/tsdb/delete_series", url.Values{"match[]": {`{part="ntf"}`}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete part ntf: HTTP %d", resp.StatusCode)
	}
	withData := 0
	for _, pc := range pcs {
		if finiteSamples(pc.got) > 0 {
			withData++
		}
		if d := diffSeries(query(p, pc.msg), pc.got); d != "" {
			t.Errorf("%s: part msg selected, part ntf's series deleted: changed: %s\n  %s", pc.where, d, pc.msg)
		}
		if d := diffSeries(query(p, pc.ntf), nil); d != "" {
			t.Errorf("%s: part ntf selected, only part msg's series left: returned some: %s\n  %s", pc.where, d, pc.ntf)
		}
	}
	t.Logf("part filter: %d queries checked, %d with data for part msg", len(pcs), withData)
}

func contains2(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// grafanaVariables gives d's variables the values Grafana interpolates into a
// Prometheus query: run_id the selected runs, every other query variable its
// default (All: its allValue), custom and textbox variables their current
// value.
func grafanaVariables(t *testing.T, d *dashboard, runIDs []string) map[string]string {
	t.Helper()
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		switch {
		case v.Name == runIDVariable:
			vars[v.Name] = grafanaFormat(v, runIDs)
		case v.Type == "datasource":
			vars[v.Name] = datasourceUID
		case v.Type == "query":
			if !v.IncludeAll || v.Current.Value != "$__all" || v.AllValue == nil {
				t.Fatalf("%s: variable %s: the test knows defaults of All with an allValue only", d.UID, v.Name)
			}
			vars[v.Name] = *v.AllValue // Grafana sends a custom all value as it is
		default:
			s, _ := v.Current.Value.(string)
			vars[v.Name] = s
		}
	}
	return vars
}

// grafanaFormat is what Grafana's Prometheus datasource puts in place of a
// variable with the selected values (interpolateQueryExpr): a variable that
// is neither multi-value nor has All gets its value with \ and ' escaped; else
// each value is regex-escaped and several are joined as (a|b).
func grafanaFormat(v variable, values []string) string {
	if !v.Multi && !v.IncludeAll {
		return strings.NewReplacer(`\`, `\\`, `'`, `\\'`).Replace(values[0])
	}
	esc := make([]string, len(values))
	for i, s := range values {
		var b strings.Builder
		for _, r := range s {
			switch {
			case r == '\\':
				b.WriteString(`\\\\`)
			case strings.ContainsRune(`$^*{}[]'+?.()|`, r):
				b.WriteString(`\\`)
				b.WriteRune(r)
			default:
				b.WriteRune(r)
			}
		}
		esc[i] = b.String()
	}
	if len(esc) == 1 {
		return esc[0]
	}
	return "(" + strings.Join(esc, "|") + ")"
}

// TestGrafanaFormat: the substitution matches the values it was given and
// nothing else, special characters included, once parsed as PromQL.
func TestGrafanaFormat(t *testing.T) {
	multi := variable{Multi: true}
	rows := []struct {
		values        []string
		match, nomatc []string
	}{
		{[]string{"20261123T1200Z-smoke-ab12"}, []string{"20261123T1200Z-smoke-ab12"}, []string{"20261123T1200Z-smoke-ab123", "x"}},
		{[]string{"a.b", "c|d"}, []string{"a.b", "c|d"}, []string{"axb", "c", "a.b|c|d"}},
		{[]string{`a\b(1)`}, []string{`a\b(1)`}, []string{"a", `a\b1`}},
	}
	for _, r := range rows {
		expr := `x{run_id=~"` + grafanaFormat(multi, r.values) + `"}`
		e, err := parser.ParseExpr(expr)
		if err != nil {
			t.Fatalf("%v: %s: %v", r.values, expr, err)
		}
		m := e.(*parser.VectorSelector).LabelMatchers[0]
		for _, s := range r.match {
			if !m.Matches(s) {
				t.Errorf("%s does not match %q", expr, s)
			}
		}
		for _, s := range r.nomatc {
			if m.Matches(s) {
				t.Errorf("%s matches %q", expr, s)
			}
		}
	}
}

// tsdbSnapshot takes a TSDB snapshot of p (head included) and returns a copy of it
// for a second Prometheus.
func tsdbSnapshot(t *testing.T, p *promServer) string {
	t.Helper()
	data, err := p.get("/api/v1/admin/tsdb/snapshot", url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(data, &s); err != nil || s.Name == "" {
		t.Fatalf("snapshot: %s: %v", data, err)
	}
	dst := filepath.Join(t.TempDir(), "data")
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(p.dataDir, "snapshots", s.Name))); err != nil {
		t.Fatal(err)
	}
	return dst
}

// deleteSeries deletes every series scraped from the target at addr.
func deleteSeries(t *testing.T, p *promServer, addr string) {
	t.Helper()
	resp, err := p.client.PostForm(p.url+"/api/v1/admin/tsdb/delete_series", url.Values{"match[]": {fmt.Sprintf(`{instance=%q}`, addr)}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("delete series of %s: HTTP %d: %s", addr, resp.StatusCode, b)
	}
}

// diffSeries says how got differs from want ("" when they are the same
// series with the same samples).
func diffSeries(got, want []rangeSeries) string {
	key := func(m map[string]string) string {
		ks := make([]string, 0, len(m))
		for k, v := range m {
			ks = append(ks, k+"="+v)
		}
		sort.Strings(ks)
		return "{" + strings.Join(ks, ", ") + "}"
	}
	index := func(ss []rangeSeries) map[string][][2]any {
		out := map[string][][2]any{}
		for _, s := range ss {
			out[key(s.Metric)] = s.Values
		}
		return out
	}
	g, w := index(got), index(want)
	var diffs []string
	for k, v := range w {
		gv, ok := g[k]
		switch {
		case !ok:
			diffs = append(diffs, "missing series "+k)
		case !sameSamples(gv, v):
			gb, _ := json.Marshal(gv)
			wb, _ := json.Marshal(v)
			diffs = append(diffs, fmt.Sprintf("series %s: samples %.300s, want %.300s", k, gb, wb))
		}
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			diffs = append(diffs, "extra series "+k)
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}

// sameSamples compares two series' samples: the same timestamps and values
// equal up to float rounding (a sum's order of terms can change with the
// series the TSDB holds), NaN equal to NaN.
func sameSamples(got, want [][2]any) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i][0] != want[i][0] {
			return false
		}
		gs, _ := got[i][1].(string)
		ws, _ := want[i][1].(string)
		if gs == ws {
			continue
		}
		g, err1 := strconv.ParseFloat(gs, 64)
		w, err2 := strconv.ParseFloat(ws, 64)
		if err1 != nil || err2 != nil || math.Abs(g-w) > 1e-9*math.Max(math.Abs(g), math.Abs(w)) {
			return false
		}
	}
	return true
}

// TestRunIDsSortNewestFirst: run_id's default, the first option of an
// alphabetical descending sort, is the newest run only because run ids start
// with a fixed-width UTC start time; scenario names must not matter.
func TestRunIDsSortNewestFirst(t *testing.T) {
	base := time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC)
	starts := []struct {
		name string
		at   time.Time
	}{
		{"zzz-oldest", base.Add(-48 * time.Hour)},
		{"Smoke", base.Add(-time.Second)},
		{"aaa", base},
		{"notify-exceed-limit", base.Add(time.Second)}, // next year
		{"0-newest", base.Add(10 * time.Hour)},
	}
	var ids []string
	for _, s := range starts {
		ids = append(ids, harness.NewRunID(s.name, s.at))
	}
	want := append([]string(nil), ids...)
	sort.Sort(sort.Reverse(sort.StringSlice(ids))) // Grafana's sort 2
	for i := range want {
		if ids[i] != want[len(want)-1-i] {
			t.Fatalf("sorted descending: %v, want newest first: %v", ids, want)
		}
	}
}
