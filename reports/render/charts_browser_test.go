package render

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/msgload/msgload/rundir"
)

// chartFit is where a chart lies on a phone's screen.
type chartFit struct {
	ID     string  `json:"id"`
	Right  float64 `json:"right"`  // the figure's right edge, CSS px
	Canvas float64 `json:"canvas"` // the uPlot canvas's width, CSS px (0: the funnel's SVG)
	SVG    float64 `json:"svg"`
}

// TestChartsFitAPhone opens report.html at 390×844 (a phone): every chart is
// drawn within the screen's width (uPlot sized to its box, the funnel's SVG
// scaled), and no script failed.
func TestChartsFitAPhone(t *testing.T) {
	bin := chromium(t)
	r := fullRun()
	r.sortEvents()
	dir := r.write(t)
	if _, err := Build(dir); err != nil {
		t.Fatal(err)
	}
	bctx := headlessBrowser(t, bin, 60*time.Second, chromedp.WindowSize(390, 844))
	var problems []string
	chromedp.ListenTarget(bctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			problems = append(problems, e.ExceptionDetails.Text)
		}
	})
	var fits []chartFit
	if err := chromedp.Run(bctx,
		chromedp.EmulateViewport(390, 844),
		chromedp.Navigate("file://"+filepath.Join(dir, rundir.HTMLFile)),
		chromedp.WaitReady("body[data-charts]", chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('figure.chart')).map(f => {
			const c = f.querySelector('canvas'), s = f.querySelector('svg');
			return {id: f.id, right: f.getBoundingClientRect().right,
				canvas: c ? c.getBoundingClientRect().width : 0, svg: s ? s.getBoundingClientRect().right : 0};
		})`, &fits),
	); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if len(problems) > 0 {
		t.Errorf("script errors: %q", problems)
	}
	if len(fits) != 6 {
		t.Fatalf("charts %+v, want 6", fits)
	}
	for _, f := range fits {
		if f.Right > 390 || f.SVG > 390 || (f.ID != "chart-funnel" && (f.Canvas <= 100 || f.Canvas > 390)) {
			t.Errorf("%s does not fit a 390 px screen: %+v", f.ID, f)
		}
	}
}
