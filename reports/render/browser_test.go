package render

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/msgload/msgload/rundir"
)

// chromium finds the browser, or skips (fails under CI=true).
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is required under CI=true (apt-get install chromium)")
	}
	t.Skip("chromium not found: the browser test of report.html is skipped")
	return ""
}

// headlessBrowser starts headless Chromium (bin) with a profile of its own and
// returns its browser context, cancelled, the browser stopped and the profile
// removed when the test ends. timeout bounds the whole browser against a hang,
// not a speed goal; opts add to the options every test uses (a window size).
func headlessBrowser(t *testing.T, bin string, timeout time.Duration, opts ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	// Chromium's helper processes may still write into the profile for a moment
	// after the browser is gone: remove it ourselves, retrying, rather than let
	// t.TempDir's cleanup fail the test.
	profile, err := os.MkdirTemp("", "msgload-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := 0; i < 20; i++ {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("could not remove the browser profile %s", profile)
	})
	opts = append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.UserDataDir(profile),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
	}, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	return bctx
}

// chartBox is what the page says about one chart.
type chartBox struct {
	ID    string  `json:"id"`
	W     float64 `json:"w"`
	H     float64 `json:"h"`
	Marks int     `json:"marks"`
}

// TestReportOpensOfflineInChromium opens report.html from disk in headless
// Chromium: no console error, no request beyond the file itself, every chart
// drew something (uPlot's canvas has its series' colours), and a screenshot is saved (to docs/report.png with -update).
func TestReportOpensOfflineInChromium(t *testing.T) {
	bin := chromium(t)
	r := fullRun()
	r.sortEvents()
	dir := r.write(t)
	if _, err := Build(dir); err != nil {
		t.Fatal(err)
	}
	page := "file://" + filepath.Join(dir, rundir.HTMLFile)

	bctx := headlessBrowser(t, bin, 60*time.Second, chromedp.WindowSize(1100, 900))

	var mu sync.Mutex
	var problems, requests []string
	chromedp.ListenTarget(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeWarning {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value))
				}
				problems = append(problems, "console "+string(ev.Type)+": "+strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Text)
		case *network.EventRequestWillBeSent:
			requests = append(requests, ev.Request.URL)
		case *network.EventLoadingFailed:
			problems = append(problems, "loading failed: "+ev.ErrorText)
		}
	})
	var boxes []chartBox
	var png []byte
	err := chromedp.Run(bctx,
		network.Enable(),
		chromedp.Navigate(page),
		chromedp.WaitReady("#chart-funnel", chromedp.ByID),
		chromedp.WaitReady("body[data-charts]", chromedp.ByQuery),
		chromedp.Evaluate(chartBoxesJS, &boxes),
		chromedp.FullScreenshot(&png, 100),
	)
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("the page reported problems: %q", problems)
	}
	for _, u := range requests {
		if u != page {
			t.Errorf("the page made a request beyond itself: %s", u)
		}
	}
	want := []string{"chart-rate", "chart-latency", "chart-window", "chart-delivery", "chart-events", "chart-funnel"}
	if len(boxes) != len(want) {
		t.Fatalf("charts %+v, want %v", boxes, want)
	}
	for i, b := range boxes {
		if b.ID != want[i] || b.Marks == 0 || b.W <= 0 || b.H <= 0 {
			t.Errorf("chart %d: %+v: did not draw", i, b)
		}
	}
	if len(png) < 1000 {
		t.Fatalf("screenshot of %d bytes", len(png))
	}
	out := filepath.Join(t.TempDir(), "report.png")
	if *update {
		out = filepath.Join("..", "..", "docs", "report.png")
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", out)
}

// chartBoxesJS reads what each chart drew: for a uPlot chart the extent of
// the coloured pixels on its canvas (the series; axes, grid and threshold
// lines are grey or black) and the series charts.js found data for; for the
// funnel's SVG its bars.
const chartBoxesJS = `Array.from(document.querySelectorAll('figure.chart')).map(f => {
	const c = f.querySelector('canvas');
	if (!c) {
		const bars = Array.from(f.querySelectorAll('rect.bar')).map(r => r.getBBox()).filter(b => b.width > 0);
		return {id: f.id, w: Math.max(0, ...bars.map(b => b.width)), h: bars.length ? bars.length * bars[0].height : 0, marks: bars.length};
	}
	const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
	let x0 = c.width, x1 = -1, y0 = c.height, y1 = -1;
	for (let i = 0; i < px.length; i += 4) {
		if (px[i + 3] < 128 || Math.max(px[i], px[i + 1], px[i + 2]) - Math.min(px[i], px[i + 1], px[i + 2]) < 60) continue;
		const x = (i / 4) % c.width, y = Math.floor(i / 4 / c.width);
		x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y);
	}
	return {id: f.id, w: Math.max(0, x1 - x0), h: Math.max(0, y1 - y0), marks: Number(f.dataset.drawn || 0)};
})`

// pageFacts is what a person sees on a report, read from the page.
type pageFacts struct {
	Charts  []string          `json:"charts"`
	Tested  map[string]string `json:"tested"`
	Outcome string            `json:"outcome"`
	Counts  map[string]string `json:"counts"`
	Bounds  map[string]int    `json:"bounds"`  // chart id → paths in the threshold colour
	Legends map[string]string `json:"legends"` // chart id → its text, "|"-joined
}

const pageFactsJS = `(() => {
	const charts = Array.from(document.querySelectorAll('figure.chart'));
	const cells = Array.from(document.querySelectorAll('table.counts td'));
	return {
		charts: charts.map(s => s.id),
		tested: Object.fromEntries(Array.from(document.querySelectorAll('table.tested tr')).map(r => [r.cells[0].innerText.trim(), r.cells[1].innerText.trim()])),
		outcome: document.querySelector('.outcome').innerText.trim(),
		counts: Object.fromEntries(Array.from(document.querySelectorAll('table.counts th')).map((th, i) => [th.innerText.trim().replace(/\s+/g, ' '), cells[i].innerText.trim()])),
		// charts.js counts the threshold lines (or off-chart arrows) it drew.
		bounds: Object.fromEntries(charts.map(s => [s.id, Number(s.dataset.marks || 0)])),
		legends: Object.fromEntries(charts.map(s => [s.id, Array.from(s.querySelectorAll('.u-legend .u-label, ul.marks li, svg text')).map(t => t.textContent.trim()).join('|')])),
	};
})()`

// TestReportReadsInChromium renders report.html of a notify run, a messaging
// run with failover and a run with retries in headless Chromium, as a release
// manager opens it, and checks what they read: the header of what was tested,
// the outcome in words and in separate counts, only the charts that apply, and
// the thresholds drawn on the charts they bound.
func TestReportReadsInChromium(t *testing.T) {
	bin := chromium(t)
	bctx := headlessBrowser(t, bin, 90*time.Second, chromedp.WindowSize(1100, 900))
	if err := chromedp.Run(bctx); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	for _, tc := range reportCases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.run()
			dir := r.write(t)
			if _, err := Build(dir); err != nil {
				t.Fatal(err)
			}
			tctx, tcancel := chromedp.NewContext(bctx)
			defer tcancel()
			var facts pageFacts
			if err := chromedp.Run(tctx,
				chromedp.Navigate("file://"+filepath.Join(dir, rundir.HTMLFile)),
				chromedp.WaitReady("table.counts", chromedp.ByQuery),
				chromedp.WaitReady("body[data-charts]", chromedp.ByQuery),
				chromedp.Evaluate(pageFactsJS, &facts),
			); err != nil {
				t.Fatalf("chromium: %v", err)
			}
			m := r.meta
			for k, want := range map[string][]string{
				"scenario":     {m.Scenario, m.Description},
				"target":       {m.API + " API", m.Target},
				"planned load": {m.Planned.Profile, num(m.Planned.Rate) + "/s", "over " + span(m.Planned.Duration.D().Seconds())},
				"clients":      {strconv.Itoa(len(m.Clients))},
				"rate limit":   {},
				"msgload":      {m.Version, m.Commit, m.CommitTime},
				"host":         {m.Host},
				"ran":          {showTime(ts(m.Start)), showTime(ts(m.End))},
			} {
				got, ok := facts.Tested[k]
				if !ok {
					t.Errorf("the header has no %q: %v", k, facts.Tested)
				}
				for _, w := range want {
					if !strings.Contains(got, w) {
						t.Errorf("header %s = %q, want it to say %q", k, got, w)
					}
				}
			}
			if m.Limit.Requests > 0 && !strings.Contains(facts.Tested["rate limit"], "mode "+m.Limit.Mode) {
				t.Errorf("header rate limit = %q: no mode", facts.Tested["rate limit"])
			}
			for _, l := range tc.outcome {
				if !strings.Contains(facts.Outcome, l) {
					t.Errorf("the verdict area says %q, want %q", facts.Outcome, l)
				}
			}
			for k, v := range tc.counts {
				if facts.Counts[k] != v {
					t.Errorf("count %q = %q, want %q (counts %v)", k, facts.Counts[k], v, facts.Counts)
				}
			}
			if strings.Join(facts.Charts, " ") != strings.Join(tc.charts, " ") {
				t.Errorf("charts drawn %v, want only %v", facts.Charts, tc.charts)
			}
			for id, label := range tc.bounds {
				if facts.Bounds[id] < 1 || !strings.Contains(facts.Legends[id], label) {
					t.Errorf("%s: threshold line %q not drawn (%d paths in its colour; text %q)", id, label, facts.Bounds[id], facts.Legends[id])
				}
			}
			for id, n := range facts.Bounds {
				if _, ok := tc.bounds[id]; !ok && n > 0 {
					t.Errorf("%s: a threshold line is drawn on a chart no threshold bounds", id)
				}
			}
			for id, text := range facts.Legends {
				for _, bad := range tc.noLegend {
					for _, entry := range strings.Split(text, "|") {
						if entry == bad {
							t.Errorf("%s: legend entry %q", id, bad)
						}
					}
				}
				if id == "chart-latency" {
					for _, s := range []string{"p50", "p95", "p99"} {
						if !strings.Contains(text, s) {
							t.Errorf("chart-latency: no %s in its legend", s)
						}
					}
				}
			}
		})
	}
}
