package grafana

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/msgload/msgload/internal/testnet"
	"github.com/msgload/msgload/rundir"
)

// needProgram returns the path of an outside program, or skips the test when
// it is absent; under CI=true its absence fails the test instead.
func needProgram(t *testing.T, path string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required when CI=true: %v", path, err)
		}
		t.Skipf("%s not installed (Debian package %s); skipping", path, filepath.Base(path))
	}
	return path
}

// source is one process's /metrics: a job name for the scrape configuration
// and the base URL serving /metrics.
type source struct {
	job string
	url string
}

// serve puts h and the registry's /metrics on a loopback httptest server.
func serve(t *testing.T, job string, g prometheus.Gatherer, h http.Handler) source {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	if h != nil {
		mux.Handle("/", h)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return source{job: job, url: srv.URL}
}

// promServer is a real Prometheus started for one test.
type promServer struct {
	url     string
	client  *http.Client
	dataDir string // its --storage.tsdb.path
}

// startPrometheus writes a configuration scraping every source each second and
// starts /usr/bin/prometheus on a temporary directory and a free loopback port.
func startPrometheus(t *testing.T, sources []source) *promServer {
	t.Helper()
	return startPrometheusOn(t, sources, "")
}

// startPrometheusOn is startPrometheus on the TSDB in dataDir ("" = a new
// one), with extra command-line flags.
func startPrometheusOn(t *testing.T, sources []source, dataDir string, extra ...string) *promServer {
	t.Helper()
	bin := needProgram(t, "/usr/bin/prometheus")
	dir := t.TempDir()
	if dataDir == "" {
		dataDir = filepath.Join(dir, "data")
	}
	var cfg strings.Builder
	cfg.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\nscrape_configs:\n")
	if len(sources) == 0 {
		cfg.WriteString("  []\n")
	}
	// Sources of one job are that job's targets, told apart by instance.
	var jobs []string
	targets := map[string][]string{}
	for _, s := range sources {
		u, _ := url.Parse(s.url)
		if targets[s.job] == nil {
			jobs = append(jobs, s.job)
		}
		targets[s.job] = append(targets[s.job], strconv.Quote(u.Host))
	}
	for _, j := range jobs {
		fmt.Fprintf(&cfg, "  - job_name: %s\n    static_configs:\n      - targets: [%s]\n", j, strings.Join(targets[j], ", "))
	}
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := testnet.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	var logs bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, append([]string{
		"--config.file=" + cfgPath,
		"--storage.tsdb.path=" + dataDir,
		"--web.listen-address=" + addr,
		"--log.level=warn",
	}, extra...)...)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start prometheus: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cancel()
			<-done
		}
		cancel()
		if t.Failed() {
			t.Logf("prometheus output:\n%s", logs.String())
		}
	})
	p := &promServer{url: "http://" + addr, client: &http.Client{Timeout: 10 * time.Second}, dataDir: dataDir}
	p.waitFor(t, "prometheus to be ready", 60*time.Second, func() bool {
		select {
		case <-done:
			t.Fatalf("prometheus exited:\n%s", logs.String())
		default:
		}
		resp, err := p.client.Get(p.url + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return p
}

// waitFor polls cond every 200ms until it holds, failing after limit. The limit
// only bounds a broken setup; no assertion depends on timing.
func (p *promServer) waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s after %v", what, limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// apiResponse is the envelope of Prometheus's HTTP API.
type apiResponse struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
	Warnings  []string        `json:"warnings"`
}

func (p *promServer) get(path string, q url.Values) (json.RawMessage, error) {
	resp, err := p.client.PostForm(p.url+path, q)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var r apiResponse
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode %s (HTTP %d): %w: %.200s", path, resp.StatusCode, err, b)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s: %s: %s", path, r.ErrorType, r.Error)
	}
	return r.Data, nil
}

// instant runs a query that returns one number (NaN when it returns none).
func (p *promServer) instant(t *testing.T, expr string) float64 {
	t.Helper()
	data, err := p.get("/api/v1/query", url.Values{"query": {expr}})
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Result []struct {
			Value [2]any `json:"value"`
		} `json:"result"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("decode %s: %v", expr, err)
	}
	if len(v.Result) == 0 {
		return math.NaN()
	}
	s, _ := v.Result[0].Value[1].(string)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%s: value %q: %v", expr, s, err)
	}
	return f
}

// rangeSeries is one series of a query_range matrix.
type rangeSeries struct {
	Metric map[string]string `json:"metric"`
	Values [][2]any          `json:"values"`
}

// queryRange runs expr over [start, end] and returns the matrix.
func (p *promServer) queryRange(expr string, start, end time.Time, step time.Duration) ([]rangeSeries, error) {
	data, err := p.get("/api/v1/query_range", url.Values{
		"query": {expr},
		"start": {strconv.FormatFloat(float64(start.UnixMilli())/1000, 'f', 3, 64)},
		"end":   {strconv.FormatFloat(float64(end.UnixMilli())/1000, 'f', 3, 64)},
		"step":  {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)},
	})
	if err != nil {
		return nil, err
	}
	var m struct {
		ResultType string        `json:"resultType"`
		Result     []rangeSeries `json:"result"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("decode matrix: %w", err)
	}
	return m.Result, nil
}

// finiteSamples counts the samples of a matrix that are numbers (not NaN or ±Inf).
func finiteSamples(ss []rangeSeries) int {
	n := 0
	for _, s := range ss {
		for _, v := range s.Values {
			str, _ := v[1].(string)
			f, err := strconv.ParseFloat(str, 64)
			if err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
				n++
			}
		}
	}
	return n
}

// labelValues lists the values of label on the series matching selector.
func (p *promServer) labelValues(label, selector string, start, end time.Time) ([]string, error) {
	q := url.Values{"start": {strconv.FormatInt(start.Unix(), 10)}, "end": {strconv.FormatInt(end.Unix()+1, 10)}}
	if selector != "" {
		q.Set("match[]", selector)
	}
	resp, err := p.client.Get(p.url + "/api/v1/label/" + url.PathEscape(label) + "/values?" + q.Encode())
	if err != nil {
		return nil, fmt.Errorf("label values of %s: %w", label, err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string   `json:"status"`
		Data   []string `json:"data"`
		Error  string   `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, fmt.Errorf("decode label values: %w", err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("label values of %s: %s", label, r.Error)
	}
	sort.Strings(r.Data)
	return r.Data, nil
}

// resolveVariables gives each variable of d a real value, in dashboard order
// (later variables' queries use earlier ones, as in Grafana): label_values
// variables take the first value Prometheus lists for them; custom and
// textbox variables keep their current value; the datasource variable is not
// used in PromQL.
// fixed sets a variable's value instead.
func resolveVariables(t *testing.T, p *promServer, d *dashboard, start, end time.Time, step time.Duration, fixed map[string]string) map[string]string {
	t.Helper()
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		if f, ok := fixed[v.Name]; ok {
			vars[v.Name] = f
			continue
		}
		switch v.Type {
		case "datasource":
			vars[v.Name] = datasourceUID
		case "query":
			m := labelValuesRE.FindStringSubmatch(v.QueryString())
			if m == nil || m[2] == "" {
				t.Fatalf("variable %s: only label_values(selector, label) queries are supported, got %q", v.Name, v.QueryString())
			}
			sel := expand(m[1], vars, step, end.Sub(start))
			vals, err := p.labelValues(m[2], sel, start, end)
			if err != nil {
				t.Fatalf("variable %s: %v", v.Name, err)
			}
			if len(vals) == 0 {
				t.Errorf("variable %s: label_values(%s, %s) lists nothing after the run", v.Name, sel, m[2])
				vars[v.Name] = "no-value"
				continue
			}
			vars[v.Name] = vals[0]
		default:
			s, _ := v.Current.Value.(string)
			vars[v.Name] = s
		}
	}
	return vars
}

// snapshot is what one source's /metrics held at its last successful read:
// the text exposition (for promtool) and the families decoded from the
// protobuf one (native histogram schemas are visible only there).
type snapshot struct {
	text     []byte
	families []*dto.MetricFamily
}

// scrape reads src's /metrics in both formats.
func scrape(src source) (*snapshot, error) {
	get := func(accept string) (*http.Response, error) {
		req, err := http.NewRequest(http.MethodGet, src.url+"/metrics", nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err == nil && resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("%s/metrics: HTTP %d", src.url, resp.StatusCode)
		}
		return resp, err
	}
	resp, err := get("text/plain;version=0.0.4")
	if err != nil {
		return nil, err
	}
	text, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp, err = get(string(expfmt.NewFormat(expfmt.TypeProtoDelim)))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	var mfs []*dto.MetricFamily
	for {
		mf := &dto.MetricFamily{}
		if err := dec.Decode(mf); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decode %s/metrics: %w", src.url, err)
		}
		mfs = append(mfs, mf)
	}
	return &snapshot{text: text, families: mfs}, nil
}

// watchSources reads every source's /metrics each 500ms until stop is
// closed, keeping the last good read: a process such as msgload run stops
// serving once its last scrape is done.
func watchSources(sources []source, stop <-chan struct{}) func() map[string]*snapshot {
	var mu sync.Mutex
	last := map[string]*snapshot{}
	done := make(chan struct{})
	read := func() {
		for _, src := range sources {
			if sn, err := scrape(src); err == nil {
				mu.Lock()
				last[src.job] = sn
				mu.Unlock()
			}
		}
	}
	go func() {
		defer close(done)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			read()
			select {
			case <-stop:
				read()
				return
			case <-tick.C:
			}
		}
	}()
	return func() map[string]*snapshot {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return last
	}
}

// checkMetricsText runs promtool check metrics on a text exposition.
func checkMetricsText(t *testing.T, promtool, job string, text []byte) {
	t.Helper()
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("%s: promtool check metrics: %v\n%s", job, err, out)
	}
}

// TestDashboardQueriesReturnData starts a real Prometheus scraping a short
// in-process run, then runs every query of every dashboard with query_range
// over the run, template variables set to real values, and requires numbers
// back from each. It also runs promtool check metrics on each /metrics.
func TestDashboardQueriesReturnData(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Prometheus and a short run; not in -short")
	}
	promtool := needProgram(t, "/usr/bin/promtool")
	needProgram(t, "/usr/bin/prometheus")
	rows := []struct {
		name  string
		start func(*testing.T) *testRun
	}{
		// sim, sink and attacker as three processes (standalone sim and sink,
		// as deploy/compose.yaml runs them): sink and sim series carry no
		// run_id, so their panels must show them while the run is alive.
		{"three-processes", startRun},
		// msgload run: one process serving everything of a two-part scenario
		// on --metrics-addr, series labelled by part.
		{"harness", startHarnessRun},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) { dashboardsAgainstRun(t, promtool, r.start(t)) })
	}
}

// dashboardsAgainstRun scrapes run with a real Prometheus and runs every
// dashboard query against it.
func dashboardsAgainstRun(t *testing.T, promtool string, run *testRun) {
	p := startPrometheus(t, run.sources)
	stopWatch := make(chan struct{})
	snapshots := watchSources(run.sources, stopWatch)
	// Sources already serving are scraped once before the traffic starts, so
	// the run is seen from its first request; msgload run opens
	// --metrics-addr only when it starts, so its source comes up during drive.
	if !run.upDuringDrive {
		p.waitFor(t, "a first scrape of every source", 60*time.Second, func() bool {
			return p.instant(t, "count(up == 1)") >= float64(len(run.sources))
		})
	}
	start := time.Now()
	run.drive(t)
	close(stopWatch)
	driven := time.Now()
	// Two scrapes after the run's end, unless the run's process stopped
	// serving (the harness lets exactly one more scrape happen).
	p.waitFor(t, "scrapes after the run", 60*time.Second, func() bool {
		return p.instant(t, "min(timestamp(up))") > float64(driven.Add(time.Second).Unix()) ||
			p.instant(t, "max(up)") == 0
	})
	end := time.Now()
	step := time.Second
	if p.instant(t, "count(up)") < float64(len(run.sources)) {
		t.Fatalf("Prometheus never scraped every source of the run")
	}

	snaps := snapshots()
	for _, src := range run.sources {
		sn := snaps[src.job]
		if sn == nil {
			t.Fatalf("%s: /metrics was never read", src.job)
		}
		if len(sn.families) == 0 || len(sn.text) == 0 {
			t.Fatalf("%s: /metrics read empty", src.job)
		}
		checkMetricsText(t, promtool, src.job, sn.text)
		for _, p := range reviewFamilies(sn.families) {
			t.Errorf("metric review: %s", p)
		}
	}

	ds, err := loadDashboards(Files)
	if err != nil {
		t.Fatal(err)
	}
	apis, err := p.labelValues("api", "msgload_run_info", start.Add(-time.Minute), end)
	if err != nil {
		t.Fatal(err)
	}
	if len(apis) < 2 {
		t.Fatalf("the run drove APIs %v; the test needs messaging and notify", apis)
	}
	for _, d := range ds {
		t.Run(d.UID, func(t *testing.T) {
			// Grafana shows one selection at a time. For every value of api
			// (the other variables follow it, taking their first real value)
			// each query must return numbers, unless its panel is listed in
			// panelAPI as meaningful for one API only: then under that one.
			type result struct {
				where, panel string
				exprs        map[string]string // api → expanded query
				data         map[string]bool   // api → returned numbers
			}
			var results []*result
			byWhere := map[string]*result{}
			for _, api := range apis {
				// part keeps its default, All (".*"): a one-part run has no
				// part to list, and each API is one part of the harness run.
				vars := resolveVariables(t, p, d, start.Add(-time.Minute), end, step, map[string]string{"api": api, "part": ".*"})
				t.Logf("variables: %v", vars)
				for _, q := range d.Queries() {
					if q.Variable {
						continue // resolved above
					}
					r := byWhere[q.Where]
					if r == nil {
						r = &result{where: q.Where, panel: q.Panel, exprs: map[string]string{}, data: map[string]bool{}}
						byWhere[q.Where] = r
						results = append(results, r)
					}
					expr := expand(q.Expr, vars, step, end.Sub(start))
					r.exprs[api] = expr
					res, err := p.queryRange(expr, start.Add(-5*time.Second), end, step)
					if err != nil {
						t.Errorf("%s: %v", q.Where, err)
						continue
					}
					r.data[api] = finiteSamples(res) > 0
				}
			}
			for _, r := range results {
				want := apis
				if only, ok := panelAPI[r.panel]; ok {
					want = []string{only}
				}
				for _, api := range want {
					if !r.data[api] {
						t.Errorf("%s: no data over the run with api=%s:\n  %s", r.where, api, r.exprs[api])
					}
				}
			}
		})
	}
}

// panelAPI names the panels that show one API only, and which: every other
// panel must show data for each API of the run. Keep it to what a run proves
// necessary (remove an entry and see the test fail).
var panelAPI = map[string]string{
	"Token requests by code":              rundir.APINotify, // OAuth tokens: notify only
	"Tokens issued":                       rundir.APINotify, // idem
	"Retry-After received":                rundir.APINotify, // quantiles need 429s: the limit applies to notify
	"Rate limited per client":             rundir.APINotify, // the simulator's 429 per client: notify's limit
	"Simulator 429 per client per window": rundir.APINotify, // idem
	"Idempotent replays":                  rundir.APINotify, // externalId: notify only
}
