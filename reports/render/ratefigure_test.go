package render

import (
	"strings"
	"testing"

	"github.com/msgload/msgload/reports"
)

// TestRateFigureWithoutPlannedRate: a replay keeps its recording's pace and
// plans no rate; the key figure says so instead of "planned 0 per second".
// A plan with a rate shows achieved against planned.
func TestRateFigureWithoutPlannedRate(t *testing.T) {
	figure := func(s *reports.Summary) string {
		for _, kf := range (view{s}).keyFigures() {
			if strings.HasPrefix(kf.name, "rate achieved") {
				return kf.name + ": " + kf.value
			}
		}
		t.Fatal("no rate figure")
		return ""
	}
	var replayed reports.Summary
	replayed.Run.Profile = "replay"
	replayed.Requests.Messages, replayed.Requests.AchievedRate = 3, 48.72
	got := figure(&replayed)
	if strings.Contains(got, "/ 0 per second") || !strings.Contains(got, "48.72 per second") || !strings.Contains(got, "no planned rate") {
		t.Errorf("replay: %q, want the achieved rate and no planned rate of 0", got)
	}
	var planned reports.Summary
	planned.Requests.Messages, planned.Requests.AchievedRate, planned.Requests.PlannedRate = 10, 19.5, 20
	if got := figure(&planned); !strings.Contains(got, "19.5 / 20 per second") {
		t.Errorf("planned: %q, want achieved / planned", got)
	}
}
