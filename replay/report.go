package replay

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/msgload/msgload/rundir"
)

// ReplayFile is the name of the replay report in a run directory.
const ReplayFile = "replay.json"

// Report is what a replay did: replay.json.
type Report struct {
	RunID       string                 `json:"run_id"`
	Speed       float64                `json:"speed"`
	ExternalIDs string                 `json:"external_ids"`
	Planned     int                    `json:"planned"`                       // sends the pacer was given
	Other       int                    `json:"other_requests,omitempty"`      // other recorded requests replayed besides the sends (status checks, webhook registrations, other calls)
	Repeats     int                    `json:"repeats,omitempty"`             // sends that resend an earlier send's externalId: replayed as its message's next attempts, not counted in sent
	Sent        int                    `json:"sent"`                          // sends made (first attempts)
	Skipped     map[string]int         `json:"skipped,omitempty"`             // reason → requests not replayed
	TokenErrors int64                  `json:"token_errors"`                  // token requests that failed
	Webhooks    int                    `json:"webhooks_registered,omitempty"` // notify clients whose webhook was registered (at the sink, when delivery is measured)
	Start       time.Time              `json:"start"`                         //
	End         time.Time              `json:"end"`                           //
	Interrupted bool                   `json:"interrupted,omitempty"`
	Lateness    Lateness               `json:"lateness"`          // how late the hits left against plan
	Codes       []codeRow              `json:"codes"`             // recorded against replayed response codes
	Matching    int                    `json:"matching"`          // requests answered with the recorded code
	Clients     map[string][][2]string `json:"clients,omitempty"` // api → [recorded, scenario] pairs
}

// codeRow counts requests of one API by recorded and replayed response code.
type codeRow struct {
	API      string `json:"api"`
	Recorded int    `json:"recorded"` // 0: none recorded (vegeta targets) or no answer
	Replayed int    `json:"replayed"` // 0: no answer
	Count    int    `json:"count"`
}

// WriteReport writes rep as JSON to path, atomically.
func WriteReport(path string, rep *Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode replay report: %w", err)
	}
	return rundir.WriteFile(path, append(b, '\n'))
}

// channelsOf returns the channels of a messaging send body, in order.
func channelsOf(body []byte) []string {
	var m struct {
		Scenario []struct {
			Channel  string `json:"channel"`
			Failover *struct {
				ConditionStatus string `json:"condition_status"`
			} `json:"failover"`
		} `json:"scenario"`
	}
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	var c rundir.Chain
	for _, it := range m.Scenario {
		l := rundir.Link{Channel: it.Channel}
		if it.Failover != nil {
			l.Until = cmp.Or(it.Failover.ConditionStatus, rundir.StateDelivered)
		}
		c = append(c, l)
	}
	return c.Strings()
}

// sortedRows turns counts into rows ordered by api, recorded, replayed code.
func sortedRows(codes map[codeRow]int) []codeRow {
	rows := make([]codeRow, 0, len(codes))
	for row, n := range codes {
		row.Count = n
		rows = append(rows, row)
	}
	slices.SortFunc(rows, func(a, b codeRow) int {
		if c := strings.Compare(a.API, b.API); c != 0 {
			return c
		}
		if a.Recorded != b.Recorded {
			return a.Recorded - b.Recorded
		}
		return a.Replayed - b.Replayed
	})
	return rows
}

// WriteTable prints the recorded against replayed response codes, and how late
// the replay ran.
func (r *Report) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "replay %s at %v×: %d of %d requests sent, %d answered with the recorded code\n",
		r.RunID, r.Speed, r.Sent, r.Planned, r.Matching)
	for why, n := range r.Skipped {
		fmt.Fprintf(w, "  not replayed: %d (%s)\n", n, why)
	}
	fmt.Fprintf(w, "  %-10s %9s %9s %8s\n", "api", "recorded", "replayed", "count")
	for _, c := range r.Codes {
		fmt.Fprintf(w, "  %-10s %9s %9s %8d\n", c.API, codeText(c.Recorded), codeText(c.Replayed), c.Count)
	}
	l := r.Lateness
	fmt.Fprintf(w, "  pacing: %d of %d hits more than %v late; lateness p50 %v, p99 %v, max %v\n",
		l.Late, l.Hits, lateThreshold, readable(l.P50), readable(l.P99), readable(l.Max))
	if r.Other > 0 {
		fmt.Fprintf(w, "  other recorded requests replayed: %d (status checks, webhook registrations, other calls; see attempts.jsonl)\n", r.Other)
	}
	if r.TokenErrors > 0 {
		fmt.Fprintf(w, "  %d token requests failed\n", r.TokenErrors)
	}
}

// readable rounds d to what a person reads (752µs, 1.1ms, 2.35s): replay.json
// keeps the nanoseconds.
func readable(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

func codeText(c int) string {
	if c == 0 {
		return "-"
	}
	return fmt.Sprint(c)
}
