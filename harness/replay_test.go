package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/replay"
	"github.com/msgload/msgload/rundir"
)

// TestReplayProfile runs a scenario whose load is a recording (a HAR of
// notification sends from two recorded clients): every recorded send goes
// out once, at the recorded offsets scaled by speed, and every one is
// delivered and timed through a fresh correlation tag.
func TestReplayProfile(t *testing.T) {
	dir := t.TempDir()
	const sends = 8
	start := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	var entries []string
	for i := range sends {
		body, _ := json.Marshal(map[string]any{"externalId": fmt.Sprintf("rec-%d", i), "recipient": map[string]string{"value": "+7999000000" + fmt.Sprint(i)}, "notificationText": "recorded"})
		client := fmt.Sprintf("recorded-%d", i%2)
		entries = append(entries, harEntry(start.Add(time.Duration(i)*400*time.Millisecond), "POST", "http://api.example/api/v1/notifications", client, string(body), 200))
	}
	writeHAR(t, filepath.Join(dir, "rec.har"), entries)
	src := `name: replayed
api: notify
target: embedded
clients: 2
load: { profile: replay, file: rec.har, speed: 2 }
limit: { rate: 100/1m, mode: respect }
delivery: { grace: 15s }
thresholds: [ "delivery.lost == 0" ]
`
	p, stderr := runSource(t, filepath.Join(dir, "replayed.yaml"), dir, src)
	requireGreen(t, p, stderr)
	var first []time.Time
	err := rundir.ReadJSONL(filepath.Join(p.Dir, rundir.AttemptsFile), func(a rundir.Attempt) error {
		if a.Op == "send" && a.Attempt <= 1 && a.Probe == "" {
			first = append(first, a.Intended)
		}
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != sends {
		t.Fatalf("%d messages sent, want the %d recorded", len(first), sends)
	}
	// Recorded 400 ms apart, replayed at speed 2: planned 200 ms apart.
	span := first[len(first)-1].Sub(first[0])
	if want := time.Duration(sends-1) * 200 * time.Millisecond; span < want-50*time.Millisecond || span > want+50*time.Millisecond {
		t.Errorf("planned span of the replay %v, want about %v", span, want)
	}
	if got := p.Summary.Delivery.Received; got != sends {
		t.Errorf("%d deliveries received, want %d", got, sends)
	}
	var meta rundir.Meta
	b, _ := os.ReadFile(filepath.Join(p.Dir, rundir.MetaFile))
	if err := json.Unmarshal(b, &meta); err != nil || meta.Planned.Profile != "replay" || meta.Planned.Requests != sends {
		t.Errorf("run.json planned = %+v (err %v), want replay of %d", meta.Planned, err, sends)
	}
	// replay.json: every recorded send replayed, recorded 200 against replayed 200.
	var rep replay.Report
	b, err = os.ReadFile(filepath.Join(p.Dir, replay.ReplayFile))
	if err != nil || json.Unmarshal(b, &rep) != nil {
		t.Fatalf("replay.json unreadable: %v", err)
	}
	if rep.Planned != sends || rep.Sent != sends || rep.Matching != sends || rep.Speed != 2 {
		t.Errorf("replay.json %+v: want %d planned, sent and matching at speed 2", rep, sends)
	}
}

// harEntry is one HAR 1.2 entry: a request at `at` and its recorded status.
func harEntry(at time.Time, method, url, client, body string, status int) string {
	post := ""
	if body != "" {
		post = fmt.Sprintf(`,"postData":{"mimeType":"application/json","text":%q}`, body)
	}
	return fmt.Sprintf(`{"startedDateTime":%q,"time":5,"request":{"method":%q,"url":%q,"httpVersion":"HTTP/1.1","headers":[{"name":"X-Client","value":%q},{"name":"Content-Type","value":"application/json"}],"queryString":[],"headersSize":-1,"bodySize":-1%s},"response":{"status":%d,"statusText":"","httpVersion":"HTTP/1.1","headers":[],"content":{"size":0,"mimeType":"application/json"},"redirectURL":"","headersSize":-1,"bodySize":-1},"cache":{},"timings":{"send":0,"wait":5,"receive":0}}`,
		at.Format(time.RFC3339Nano), method, url, client, post, status)
}

// writeHAR writes a HAR 1.2 file of entries to path.
func writeHAR(t *testing.T, path string, entries []string) {
	t.Helper()
	har := `{"log":{"version":"1.2","creator":{"name":"test","version":"1"},"entries":[` + strings.Join(entries, ",\n") + `]}}`
	if err := os.WriteFile(path, []byte(har), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReplayKeepsIDsAndOtherRequests replays, through the harness, what only
// the old replay path did: recorded externalIds kept (load.externalIds: keep;
// the report joins their untagged webhooks by externalId) and the recorded
// requests other than sends (a webhook registration, pointed at the run's
// sink, and another call) sent at their recorded times, each an attempt of its
// own op with seq 0, never a message.
func TestReplayKeepsIDsAndOtherRequests(t *testing.T) {
	dir := t.TempDir()
	const sends = 4
	start := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	entries := []string{harEntry(start, "POST", "http://api.example/api/v1/webhooks", "app", `{"url":"https://app.example/hook"}`, 200)}
	for i := range sends {
		body := fmt.Sprintf(`{"externalId":"kept-%d","recipient":{"value":"+7999000000%d"},"notificationText":"recorded"}`, i, i)
		entries = append(entries, harEntry(start.Add(time.Duration(i+1)*200*time.Millisecond), "POST", "http://api.example/api/v1/notifications", "app", body, 200))
	}
	entries = append(entries, harEntry(start.Add(1100*time.Millisecond), "GET", "http://api.example/api/v1/notifications/n-1?full=1", "app", "", 200))
	writeHAR(t, filepath.Join(dir, "rec.har"), entries)
	src := `name: kept
api: notify
target: embedded
load: { profile: replay, file: rec.har, speed: 2, externalIds: keep, clientHeader: X-Client }
limit: { mode: exceed }
delivery: { grace: 15s }
thresholds: [ "delivery.lost == 0" ]
`
	p, stderr := runSource(t, filepath.Join(dir, "kept.yaml"), dir, src)
	requireGreen(t, p, stderr)
	var atts []rundir.Attempt
	if err := rundir.ReadJSONL(filepath.Join(p.Dir, rundir.AttemptsFile), func(a rundir.Attempt) error { atts = append(atts, a); return nil }, nil); err != nil {
		t.Fatal(err)
	}
	ops := map[string]int{}
	var first, other time.Time
	for _, a := range atts {
		ops[a.Op]++
		switch a.Op {
		case "send":
			if a.ExternalID != fmt.Sprintf("kept-%d", a.Seq-1) || a.Client != "demo-1" {
				t.Errorf("send %d: externalId %q as %s, want the recorded kept-%d as demo-1", a.Seq, a.ExternalID, a.Client, a.Seq-1)
			}
			if a.Seq == 1 {
				first = a.Intended
			}
		case "replay_other", "webhook":
			if a.Seq != 0 || a.Code/100 == 5 || a.Code == 0 {
				t.Errorf("extra %+v: want seq 0 and an answer", a)
			}
			if a.Op == "replay_other" {
				other = a.Intended
			}
		}
	}
	// The attacker's own webhook registration, the recorded one, the other call.
	if ops["send"] != sends || ops["webhook"] != 2 || ops["replay_other"] != 1 {
		t.Errorf("attempts by op %v: want %d sends, 2 webhook registrations, 1 replay_other", ops, sends)
	}
	// Recorded 1100 ms and 200 ms in, at speed 2: 450 ms apart.
	if d := other.Sub(first); d != 450*time.Millisecond {
		t.Errorf("the other call was planned %v after the first send, want 450ms", d)
	}
	// Kept ids: delivered all the same (the replayed registration pointed at the sink).
	if d := p.Summary.Delivery; d.Received != sends || d.Lost != 0 {
		t.Errorf("delivery %+v: want %d received, none lost", d, sends)
	}
	if p.Summary.Requests.ByOp["replay_other"] != 1 {
		t.Errorf("summary requests by op %v", p.Summary.Requests.ByOp)
	}
	var rep replay.Report
	b, err := os.ReadFile(filepath.Join(p.Dir, replay.ReplayFile))
	if err != nil || json.Unmarshal(b, &rep) != nil {
		t.Fatalf("replay.json unreadable: %v", err)
	}
	if rep.Planned != sends || rep.Matching != sends || rep.Other != 2 || rep.ExternalIDs != "keep" || rep.Webhooks != 1 {
		t.Errorf("replay.json %+v: want %d sends matching, 2 other requests, kept ids, 1 client's webhook", rep, sends)
	}
}
