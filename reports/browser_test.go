package reports

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
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

// chartBox is what the page says about one chart.
type chartBox struct {
	ID    string  `json:"id"`
	W     float64 `json:"w"`
	H     float64 `json:"h"`
	Marks int     `json:"marks"`
}

// TestReportOpensOfflineInChromium opens report.html from disk in headless
// Chromium: no console error, no request beyond the file itself, every chart
// drew something, and a screenshot is saved (to docs/report.png with -update).
func TestReportOpensOfflineInChromium(t *testing.T) {
	bin := chromium(t)
	r := fullRun()
	r.sortEvents()
	dir := r.write(t)
	if _, err := Build(dir); err != nil {
		t.Fatal(err)
	}
	page := "file://" + filepath.Join(dir, rundir.HTMLFile)

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
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.UserDataDir(profile), chromedp.WindowSize(1100, 900),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()

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
	err = chromedp.Run(bctx,
		network.Enable(),
		chromedp.Navigate(page),
		chromedp.WaitReady("#chart-funnel", chromedp.ByID),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('svg.chart')).map(s => {
			// The data marks: paths stroked or filled in a series colour (gonum/plot draws axes and ticks in black).
			const marks = Array.from(s.querySelectorAll('path')).filter(p => /(stroke|fill):#(`+seriesColors()+`)\b/i.test(p.getAttribute('style') || ''));
			let w = 0, h = 0;
			for (const m of marks) { const b = m.getBBox(); w = Math.max(w, b.width); h = Math.max(h, b.height); }
			return {id: s.id, w: w, h: h, marks: marks.length};
		})`, &boxes),
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
		out = filepath.Join("..", "docs", "report.png")
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", out)
}

// seriesColors is the report palette as a regexp alternation (hex digits only).
func seriesColors() string {
	var cs []string
	for _, c := range palette {
		cs = append(cs, strings.TrimPrefix(c, "#"))
	}
	return strings.Join(cs, "|")
}
