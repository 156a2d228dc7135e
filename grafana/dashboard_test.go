package grafana

import (
	"encoding/json"
	"fmt"
	dto "github.com/prometheus/client_model/go"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// walkDatasources calls fn with the JSON path and value of every "datasource"
// key anywhere in the document.
func walkDatasources(path string, v any, fn func(path string, ds any)) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if k == "datasource" {
				fn(path+"."+k, c)
			}
			walkDatasources(path+"."+k, c, fn)
		}
	case []any:
		for i, c := range x {
			walkDatasources(fmt.Sprintf("%s[%d]", path, i), c, fn)
		}
	}
}

// checkDashboard applies the shipping rules of STYLE.md "Grafana" and the
// issue to one dashboard and returns every breach. allowed maps series names
// (histogram suffixes included) to the metric family that registers them.
func checkDashboard(d *dashboard, allowed map[string]string) []string {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }

	if id, ok := d.Raw["id"]; !ok || id != nil {
		bad(`"id" must be present and null, got %v`, d.Raw["id"])
	}
	if !regexp.MustCompile(`^msgload-[a-z0-9-]{1,30}$`).MatchString(d.UID) {
		bad("uid %q is not a fixed msgload-… uid of at most 40 characters", d.UID)
	}
	if _, ok := d.Raw["__inputs"]; ok {
		bad("__inputs present: ship the dashboard for provisioning, not the export-for-sharing form")
	}
	if _, ok := d.Raw["__requires"]; ok {
		bad("__requires present: export-for-sharing leftovers")
	}
	walkDatasources("$", d.Raw, func(path string, ds any) {
		b, _ := json.Marshal(ds)
		if got := datasourceRef(b); got != "${"+datasourceVariable+"}" {
			bad("%s: datasource %s, want uid ${%s}", path, b, datasourceVariable)
		}
	})
	vars := map[string]variable{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v
	}
	if v, ok := vars[datasourceVariable]; !ok || v.Type != "datasource" || v.QueryString() != "prometheus" {
		bad("no datasource variable %s of type prometheus", datasourceVariable)
	}
	for name, label := range map[string]string{"run_id": "run_id", "api": "api", "client": "client"} {
		if v, ok := vars[name]; !ok || v.Type != "query" || v.LabelValuesLabel() != label {
			bad("variable %s must be a label_values(…, %s) query", name, label)
		}
	}
	if v := vars["run_id"]; !strings.Contains(v.QueryString(), "msgload_run_info") {
		bad("variable run_id must list msgload_run_info's run ids, got %q", v.QueryString())
	}
	// The newest run by default: run ids start with their start time, so
	// alphabetical descending puts it first, and with no saved value and no
	// All option Grafana selects the first option. (With includeAll, Grafana
	// ≥ 11 would default to All instead.) Several or all runs are ticked in
	// the multi-value list.
	if v := vars["run_id"]; v.Sort != sortAlphaDesc || !v.Multi || v.IncludeAll || v.Current.Value != nil {
		bad("variable run_id must list runs newest first (sort %d, got %d), multi-value without an All option (multi %v, includeAll %v) and no saved value (got %v): the newest run is the default",
			sortAlphaDesc, v.Sort, v.Multi, v.IncludeAll, v.Current.Value)
	}
	if v, ok := vars["part"]; !ok || v.LabelValuesLabel() != "part" || !strings.Contains(v.QueryString(), "msgload_run_info") ||
		!v.IncludeAll || v.AllValue == nil || *v.AllValue != ".*" {
		bad(`variable part must be label_values(msgload_run_info{…}, part) with All = ".*" (a one-part run has no part label)`)
	}
	if len(d.Links) == 0 {
		bad("no links to the other dashboards")
	}
	for i, l := range d.Links {
		if !l.IncludeVars || !l.KeepTime {
			bad("link %d must carry the selection across (includeVars and keepTime)", i)
		}
	}
	var start, end bool
	for _, a := range d.Annotations.List {
		start = start || strings.Contains(a.Expr, "msgload_run_start_timestamp_seconds")
		end = end || strings.Contains(a.Expr, "msgload_run_end_timestamp_seconds")
	}
	if !start || !end {
		bad("annotations must mark run start and end (start %v, end %v)", start, end)
	}

	sample := d.SampleVariables()
	qs := d.Queries()
	if len(qs) == 0 {
		bad("no queries")
	}
	for _, q := range qs {
		expr := expand(q.Expr, sample, 5*time.Second, 10*time.Minute)
		if strings.Contains(expr, "$") || strings.Contains(expr, "[[") {
			bad("%s: undefined variable left in %q", q.Where, expr)
			continue
		}
		names, err := metricNames(expr)
		if err != nil {
			bad("%s: %v", q.Where, err)
			continue
		}
		if !q.Variable {
			if err := checkRunFilter(q.Expr, sample); err != nil {
				bad("%s: %v", q.Where, err)
			}
		}
		for _, n := range names {
			if _, ok := allowed[n]; !ok {
				bad("%s: metric %s is not registered by msgload", q.Where, n)
			}
		}
	}
	for _, p := range d.AllPanels() {
		if p.Type != "row" && len(p.Targets) == 0 {
			bad("panel %d %q has no query", p.ID, p.Title)
		}
		if p.Type != "row" && p.FieldConfig.Defaults.NoValue == "" {
			bad("panel %d %q has no noValue text: say why a run can leave it empty", p.ID, p.Title)
		}
		if g := p.GridPos; g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
			bad("panel %d %q: gridPos %+v off the 24-column grid", p.ID, p.Title, g)
		}
	}
	return errs
}

// TestDashboardRules checks each shipped dashboard against the rules; the
// metric names against the contract list (TestDashboardsUseRegisteredMetrics
// does it against the real registries).
func TestDashboardRules(t *testing.T) {
	ds, err := loadDashboards(Files)
	if err != nil {
		t.Fatal(err)
	}
	wantUIDs := map[string]bool{"msgload-overview": true, "msgload-rate-limit": true, "msgload-delivery": true, "msgload-simulator": true}
	uids := map[string]string{}
	for _, d := range ds {
		t.Run(d.File, func(t *testing.T) {
			for _, e := range checkDashboard(d, seriesNames(contractMetrics)) {
				t.Error(e)
			}
			if prev, ok := uids[d.UID]; ok {
				t.Errorf("uid %s used by %s too", d.UID, prev)
			}
			uids[d.UID] = d.File
			if want := "msgload-" + strings.TrimSuffix(d.File, ".json"); d.UID != want {
				t.Errorf("uid %s, want %s (file name and uid agree)", d.UID, want)
			}
		})
		delete(wantUIDs, d.UID)
	}
	for u := range wantUIDs {
		t.Errorf("dashboard %s missing", u)
	}
}

// TestCheckDashboardCatches proves the checker finds each breach: every row
// breaks one rule of a valid dashboard and names the words its error must hold.
func TestCheckDashboardCatches(t *testing.T) {
	read := func(file string) string {
		if file == "" {
			file = "overview.json"
		}
		b, err := os.ReadFile(filepath.Join("dashboards", file))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	good := read("")
	allowed := seriesNames(contractMetrics)
	rows := []struct {
		name, old, new, want string
		file                 string // "" = overview.json
	}{
		// a panel that reads every run's series
		{"no run filter", `sum(msgload_requests_total{api=~\"$api\", client=~\"$client\"} * on (instance, job, part) group_left () max by (instance, job, part) (msgload_run_info{run_id=~\"$run_id\", part=~\"$part\"}))`,
			`sum(msgload_requests_total{api=~\"$api\", client=~\"$client\"})`, "not filtered by the selected run", ""},
		// a join that ignores the part: both parts of a run would be summed
		{"join without part", `* on (instance, job, part) group_left () max by (instance, job, part)`, `* on (instance, job) group_left () max by (instance, job)`, "want on (instance, job, part)", ""},
		// the run info read without the run: every run's processes pass the join
		{"run info unfiltered", `msgload_run_info{run_id=~\"$run_id\", part=~\"$part\"}))"`, `msgload_run_info))"`, "not filtered by the selected run", ""},
		// a constant line drawn whatever the run
		{"constant", `"expr": "max(msgload_run_info{run_id=~\"$run_id\", part=~\"$part\"}) * $limit"`, `"expr": "vector($limit)"`, "reads no series", "rate-limit.json"},
		// an embedded simulator's series of every run
		{"sim series unfiltered", `client=~\"$client\", run_id=~\"$run_id\", part=~\"$part\"}`, `client=~\"$client\"}`, "not filtered by the selected run", "simulator.json"},
		// a run's own series joined by time as if standalone
		{"time join of run series", `client=~\"$client\", run_id=\"\"}`, `client=~\"$client\"}`, "only a standalone sim or sink", "simulator.json"},
		// the oldest run by default
		{"oldest first", `"sort": 2`, `"sort": 1`, "newest first", ""},
		// an empty panel without a word of why
		{"no noValue", `"noValue": "no 429 in this run"`, `"noValue": ""`, "no noValue text", ""},
		// links that drop the selection
		{"links drop vars", `"includeVars": true`, `"includeVars": false`, "carry the selection", ""},
		// an exported dashboard carries a numeric id: provisioning would clash
		{"numeric id", `"id": null`, `"id": 7`, `"id" must be present and null`, ""},
		// a datasource pinned to one install's uid breaks everywhere else
		{"pinned datasource", `"uid": "${DS_PROMETHEUS}"`, `"uid": "P1809F7CD0C75ACF3"`, "want uid ${DS_PROMETHEUS}", ""},
		// a typo in a metric name must not pass silently
		{"unknown metric", `msgload_requests_in_flight{`, `msgload_request_in_flight{`, "not registered by msgload", ""},
		// a syntax error in PromQL
		{"bad promql", `sum by (code) (rate(`, `sum by (code) (rate((`, "parse", ""},
		// a variable no one defined
		{"undefined variable", `client=~\"$client\"`, `client=~\"$cleint\"`, "undefined variable", ""},
		// export-for-sharing leftovers
		{"inputs", `"id": null,`, `"id": null, "__inputs": [],`, "__inputs present", ""},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			src := read(r.file)
			if !strings.Contains(src, r.old) {
				t.Fatalf("fixture text %q not in %s", r.old, r.file)
			}
			d, err := parseDashboard([]byte(strings.Replace(src, r.old, r.new, 1)))
			if err != nil {
				t.Fatal(err)
			}
			errs := checkDashboard(d, allowed)
			if !strings.Contains(strings.Join(errs, "\n"), r.want) {
				t.Errorf("errors %q do not mention %q", errs, r.want)
			}
		})
	}
	d, err := parseDashboard([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if errs := checkDashboard(d, allowed); len(errs) != 0 {
		t.Errorf("valid dashboard refused: %q", errs)
	}
}

// TestExpand covers the variable forms Grafana accepts and its built-ins.
func TestExpand(t *testing.T) {
	vars := map[string]string{"api": "notify", "client": ".*", "window": "1m"}
	rows := []struct{ in, want string }{
		{`x{api=~"$api"}`, `x{api=~"notify"}`},                            // $name
		{`x{api=~"${api}"}`, `x{api=~"notify"}`},                          // ${name}
		{`x{api=~"${api:regex}"}`, `x{api=~"notify"}`},                    // ${name:format}
		{`x{api=~"[[api]]"}`, `x{api=~"notify"}`},                         // [[name]] (old form)
		{`rate(x[$__rate_interval])`, `rate(x[20s])`},                     // 4 × step, at least step + 15s
		{`increase(x[$window])`, `increase(x[1m])`},                       // custom variable
		{`x{a="$apis"}`, `x{a="$apis"}`},                                  // unknown variable stays for the check to catch
		{`increase(x[$__range]) / $__range_s`, `increase(x[600s]) / 600`}, // range built-ins
	}
	for _, r := range rows {
		if got := expand(r.in, vars, 5*time.Second, 10*time.Minute); got != r.want {
			t.Errorf("Expand(%q) = %q, want %q", r.in, got, r.want)
		}
	}
}

// TestMetricNames: selectors by name and by __name__, and one without a name.
func TestMetricNames(t *testing.T) {
	rows := []struct {
		expr string
		want string
		err  bool
	}{
		{`sum(rate(a_total[1m])) / sum(rate(b_total[1m]))`, "a_total b_total", false}, // both sides of a binary op
		{`{__name__="a_total", x="y"}`, "a_total", false},                             // name given as a matcher
		{`histogram_quantile(0.9, sum by (le) (rate(h_bucket[5m])))`, "h_bucket", false},
		{`vector(1)`, "", false},            // no selector at all
		{`{x="y"}`, "", true},               // a selector with no metric name
		{`sum(rate(a_total[1m])`, "", true}, // unbalanced
	}
	for _, r := range rows {
		got, err := metricNames(r.expr)
		if (err != nil) != r.err {
			t.Errorf("MetricNames(%q) err = %v, want error %v", r.expr, err, r.err)
			continue
		}
		if strings.Join(got, " ") != r.want {
			t.Errorf("MetricNames(%q) = %q, want %q", r.expr, got, r.want)
		}
	}
}

// TestReviewFamilies proves each review rule fires, one row per rule.
func TestReviewFamilies(t *testing.T) {
	str := func(s string) *string { return &s }
	typ := func(t dto.MetricType) *dto.MetricType { return &t }
	schema := int32(3)
	rows := []struct {
		name string
		mf   *dto.MetricFamily
		want string // "" when the family is fine
	}{
		// a well-formed latency histogram: classic buckets and a native schema
		{"ok", &dto.MetricFamily{Name: str("msgload_x_seconds"), Type: typ(dto.MetricType_HISTOGRAM), Metric: []*dto.Metric{{
			Label: []*dto.LabelPair{{Name: str("api"), Value: str("notify")}}, Histogram: &dto.Histogram{Schema: &schema, Bucket: []*dto.Bucket{{}}}}}}, ""},
		// another prefix breaks the one-prefix rule
		{"prefix", &dto.MetricFamily{Name: str("load_total"), Type: typ(dto.MetricType_COUNTER), Metric: []*dto.Metric{{}}}, "msgload_ prefix"},
		// an unbounded label such as a URL
		{"label", &dto.MetricFamily{Name: str("msgload_y_total"), Type: typ(dto.MetricType_COUNTER), Metric: []*dto.Metric{{
			Label: []*dto.LabelPair{{Name: str("url"), Value: str("http://x")}}}}}, `label "url"`},
		// a latency histogram with no native buckets
		{"native", &dto.MetricFamily{Name: str("msgload_z_seconds"), Type: typ(dto.MetricType_HISTOGRAM), Metric: []*dto.Metric{{
			Histogram: &dto.Histogram{Bucket: []*dto.Bucket{{}}}}}}, "without native buckets"},
	}
	for _, r := range rows {
		got := strings.Join(reviewFamilies([]*dto.MetricFamily{r.mf}), "\n")
		if (r.want == "") != (got == "") || !strings.Contains(got, r.want) {
			t.Errorf("%s: problems %q, want one mentioning %q", r.name, got, r.want)
		}
	}
}
