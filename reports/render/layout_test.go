package render

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/msgload/msgload/rundir"
)

// layoutFacts is what the layout check reads off a page at one viewport.
type layoutFacts struct {
	ScrollWidth   float64  `json:"scrollWidth"`
	LayoutWidth   float64  `json:"layoutWidth"`
	InnerHeight   float64  `json:"innerHeight"`
	Small         []string `json:"small"`
	VerdictBottom float64  `json:"verdictBottom"`
	ThrBottom     float64  `json:"thrBottom"`
}

// layoutJS measures the page: its width against the viewport's (horizontal
// overflow; the layout width is the device's only with a viewport meta), the
// text set under 11 px (the charts' own SVG text aside: charts.go draws it to
// scale), and where the verdict and the first threshold end.
const layoutJS = `(() => {
	const small = [];
	const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	for (let n = walker.nextNode(); n; n = walker.nextNode()) {
		if (!n.textContent.trim()) continue;
		const el = n.parentElement;
		if (el.closest('svg')) continue;
		const fs = parseFloat(getComputedStyle(el).fontSize);
		if (fs < 11) small.push(el.tagName + ' ' + fs + 'px: ' + n.textContent.trim().slice(0, 40));
	}
	const thr = document.querySelector('table.thr tr');
	return {
		scrollWidth: document.documentElement.scrollWidth,
		layoutWidth: document.documentElement.clientWidth,
		innerHeight: window.innerHeight,
		small: small.slice(0, 10),
		verdictBottom: document.querySelector('h1 .v').getBoundingClientRect().bottom,
		thrBottom: thr ? thr.getBoundingClientRect().bottom : -1,
	};
})()`

// layoutRuns are the reports the layout test opens: a single run, a run with
// parts, a failed run and an incomplete one; each returns its run directory.
func layoutRuns(t *testing.T) map[string]string {
	single := fullRun()
	single.sortEvents()
	interrupted := passingRun()
	interrupted.meta.Interrupted = true
	dirs := map[string]string{}
	for name, r := range map[string]*run{"single": single, "failed": cardRun(), "incomplete": interrupted} {
		dirs[name] = r.write(t)
		if _, err := Build(dirs[name]); err != nil {
			t.Fatal(err)
		}
	}
	dirs["multi-part"] = multiPartRun(t)
	return dirs
}

// TestReportLayoutInChromium opens report.html of a single, a multi-part, a
// failed and an incomplete run in headless Chromium at 1366×900 and on a
// 390×844 phone, saves a screenshot of each (in $TEST_ARTIFACTS, else the
// test's temporary directory), and checks what a reader meets: no horizontal
// overflow (tables scroll inside their box), the page laid out at the
// phone's width (a viewport meta), no text under 11 px, and at 1366×900 the
// verdict and the first threshold above the fold.
func TestReportLayoutInChromium(t *testing.T) {
	bin := chromium(t)
	artifacts := os.Getenv("TEST_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	// A bound against a hung browser, not a speed goal: each page gets its
	// own generous deadline, so a busy machine slows the test, never fails it.
	bctx := headlessBrowser(t, bin, 15*time.Minute)
	if err := chromedp.Run(bctx); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	viewports := []struct {
		name   string
		w, h   int64
		mobile bool
	}{{"desktop", 1366, 900, false}, {"phone", 390, 844, true}}
	for name, dir := range layoutRuns(t) {
		for _, vp := range viewports {
			t.Run(name+"/"+vp.name, func(t *testing.T) {
				pctx, pcancel := context.WithTimeout(bctx, 3*time.Minute)
				defer pcancel()
				tctx, tcancel := chromedp.NewContext(pctx)
				defer tcancel()
				emulate := chromedp.EmulateViewport(vp.w, vp.h)
				if vp.mobile {
					emulate = chromedp.EmulateViewport(vp.w, vp.h, chromedp.EmulateScale(3), chromedp.EmulateMobile)
				}
				var facts layoutFacts
				var png []byte
				if err := chromedp.Run(tctx, emulate,
					chromedp.Navigate("file://"+filepath.Join(dir, rundir.HTMLFile)),
					chromedp.WaitReady("h1", chromedp.ByQuery),
					chromedp.Evaluate(layoutJS, &facts),
					chromedp.FullScreenshot(&png, 100),
				); err != nil {
					t.Fatalf("chromium: %v", err)
				}
				shot := filepath.Join(artifacts, fmt.Sprintf("report-%s-%dx%d.png", name, vp.w, vp.h))
				if err := os.WriteFile(shot, png, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("screenshot: %s", shot)
				if vp.mobile && facts.LayoutWidth != float64(vp.w) {
					t.Errorf("laid out %v px wide on a %d px screen (no viewport meta?)", facts.LayoutWidth, vp.w)
				}
				if facts.ScrollWidth > facts.LayoutWidth {
					t.Errorf("the page is %v px wide in a %v px viewport: it overflows sideways", facts.ScrollWidth, facts.LayoutWidth)
				}
				if len(facts.Small) > 0 {
					t.Errorf("text under 11 px: %q", facts.Small)
				}
				if vp.mobile {
					return
				}
				if facts.VerdictBottom <= 0 || facts.VerdictBottom > facts.InnerHeight {
					t.Errorf("the verdict ends at %v px, below the fold (%v px)", facts.VerdictBottom, facts.InnerHeight)
				}
				if facts.ThrBottom <= 0 || facts.ThrBottom > facts.InnerHeight {
					t.Errorf("the first threshold ends at %v px, not above the fold (%v px)", facts.ThrBottom, facts.InnerHeight)
				}
			})
		}
	}
}
