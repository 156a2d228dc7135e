package sim

import (
	"os"
	"os/exec"
	"testing"
	"testing/synctest"
	"time"

	"github.com/msgload/msgload/internal/e164"
	"github.com/msgload/msgload/rundir"
)

// TestZoneTableOnlyWhenAsked: messages whose schedule is read in UTC leave the
// time-zone table undecoded; the first with useRecipientTimeZone decodes it.
// In a child process of its own, so that no other test has decoded it first.
func TestZoneTableOnlyWhenAsked(t *testing.T) {
	if os.Getenv("MSGLOAD_SIM_ZONE_CHILD") == "1" {
		zoneTableChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestZoneTableOnlyWhenAsked$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MSGLOAD_SIM_ZONE_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// zoneTableChild sends a UTC-scheduled message, checks the table is still
// undecoded, then a recipient-local one, and checks it is decoded.
func zoneTableChild(t *testing.T) {
	if e164.ZonesDecoded() {
		t.Fatal("the time-zone table was decoded before any message (at init)")
	}
	send := func(schedule string) {
		synctest.Test(t, func(t *testing.T) {
			cfg := engineConfig()
			cfg.Messaging.Profiles[rundir.ChannelSMS] = channelProfile{Delay: fixed(0), Outcomes: []Outcome{{State: rundir.StateDelivered, Weight: 1}}}
			s, rt := newFakeSim(t, cfg)
			body := `{"callback":"http://cb.test/c","schedule":` + schedule + `,"scenario":[` +
				itemJSON("recipient", `{"type":"MSISDN","value":"+74951234567"}`) + `]}`
			if w := sendAs(s, "demo", "demo", body); w.Code != 200 {
				t.Fatalf("send: %d %s", w.Code, w.Body)
			}
			time.Sleep(48 * time.Hour)
			synctest.Wait()
			if n := len(rt.got()); n != 1 {
				t.Fatalf("want 1 callback, got %d", n)
			}
		})
	}
	send(`{"startTime":"09:00:00","stopTime":"18:00:00"}`)
	if e164.ZonesDecoded() {
		t.Fatal("a UTC schedule decoded the time-zone table")
	}
	send(`{"startTime":"09:00:00","stopTime":"18:00:00","useRecipientTimeZone":true}`)
	if !e164.ZonesDecoded() {
		t.Fatal("useRecipientTimeZone did not decode the time-zone table (the check above cannot tell anything)")
	}
}
