package rundir_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
	"github.com/msgload/msgload/sim"
	"github.com/msgload/msgload/sink"
)

// The vocabulary test: the simulator, the sink and the scenario loader accept
// exactly the channels and states rundir lists, no more, no fewer. (The
// reports, which count rather than refuse, are checked in the reports
// package: reports/vocabulary_test.go.) Each check is tried with every word
// rundir lists and with candidates it does not: the words of the other lists
// (a state where a channel belongs, vkok where a status record's channel
// belongs), their other case, and words a service might plausibly use.

// candidates returns the words to try against list: every seed word rundir
// knows, their other case, and outsiders.
func candidates(list []string) []string {
	all := slices.Concat(rundir.Channels(), rundir.States(), rundir.NotifyStates(), rundir.ConditionStatuses(),
		[]string{rundir.StateAccepted}, list,
		[]string{"", "telegram", "email", "vk", "ok", "max", "PENDING", "READ", "SENT", "QUEUED", "UNKNOWN", "DELIVERED ", " sms"})
	for _, w := range slices.Clone(all) {
		all = append(all, strings.ToUpper(w), strings.ToLower(w))
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// exactly checks that accepts takes every word of list and no other
// candidate but those in skip.
func exactly(t *testing.T, what string, list []string, accepts func(w string) error, skip ...string) {
	t.Helper()
	if len(list) == 0 {
		t.Fatalf("%s: rundir lists no words", what)
	}
	for _, w := range candidates(list) {
		if slices.Contains(skip, w) {
			continue
		}
		err := accepts(w)
		switch want := slices.Contains(list, w); {
		case want && err != nil:
			t.Errorf("%s: refuses %q, which rundir lists: %v", what, w, err)
		case !want && err == nil:
			t.Errorf("%s: accepts %q, which rundir does not list (%s)", what, w, strings.Join(list, ", "))
		}
	}
}

func TestVocabularySim(t *testing.T) {
	send := func(items string) error {
		req, err := sim.DecodeSend(strings.NewReader(`{"scenario":[` + items + `]}`))
		if err != nil {
			return err
		}
		return sim.ValidateSend(req, nil)
	}
	item := func(ch, extra string) string {
		return fmt.Sprintf(`{"channel":%q,"sender":"msgload","recipient":{"type":"MSISDN","value":"+79991234567"}%s}`, ch, extra)
	}
	exactly(t, "sim send: scenario[].channel", rundir.Channels(), func(w string) error { return send(item(w, "")) })
	exactly(t, "sim send: failover.condition_status", rundir.ConditionStatuses(), func(w string) error {
		return send(item(rundir.ChannelViber, fmt.Sprintf(`,"failover":{"ttl":10,"condition_status":%q}`, w)) + "," + item(rundir.ChannelSMS, ""))
	})
	config := func(doc string) error {
		cfg, err := sim.ParseConfig("vocab.yaml", []byte(doc))
		if err != nil {
			return err
		}
		if errs := cfg.Validate(); len(errs) > 0 {
			return fmt.Errorf("%v", errs)
		}
		return nil
	}
	exactly(t, "sim config: messaging.profiles.<channel>", rundir.Channels(), func(w string) error {
		return config(fmt.Sprintf("messaging:\n  profiles:\n    %q:\n      delay: {dist: fixed, median: 1s}\n      outcomes: [{state: DELIVERED, weight: 1}]\n", w))
	})
	exactly(t, "sim config: notify.outcomes[].state", rundir.NotifyStates(), func(w string) error {
		return config(fmt.Sprintf("notify:\n  outcomes:\n    - {state: %q, weight: 1}\n", w))
	})
	// Every channel has a built-in profile, and none besides.
	if got := slices.Sorted(maps.Keys(sim.DefaultConfig().Messaging.Profiles)); !slices.Equal(got, slices.Sorted(slices.Values(rundir.Channels()))) {
		t.Errorf("sim built-in profiles for %v, rundir's channels are %v", got, rundir.Channels())
	}
}

func TestVocabularySink(t *testing.T) {
	const txID = "0b6e3c1e-6f0a-4a57-9c7e-2f4f3a1b2c3d"
	status := func(fields string) error {
		_, err := sink.ParseStatusRecord([]byte(`{"txId":"` + txID + `","updatedAt":"2026-11-23T02:00:00Z",` + fields + `}`))
		return err
	}
	exactly(t, "sink status record: state", rundir.States(), func(w string) error {
		return status(fmt.Sprintf(`"state":%q`, w))
	})
	exactly(t, "sink status record: channel", rundir.StatusChannels(), func(w string) error {
		return status(fmt.Sprintf(`"state":"DELIVERED","channel":%q`, w))
	})
	exactly(t, "sink incoming: channel", rundir.IncomingChannels(), func(w string) error {
		_, err := sink.ParseIncoming([]byte(fmt.Sprintf(`{"txId":"%s","channel":%q,"recipient":{"type":"MSISDN","value":"79001234567"},"sender":"shop"}`, txID, w)))
		return err
	})
}

func TestVocabularyScenarios(t *testing.T) {
	parse := func(scenario, simProfiles string) error {
		src := "name: vocab\napi: messaging\nload: { profile: constant, rate: 1/s, requests: 1 }\n" +
			"message:\n  recipient: \"+79990000001\"\n  scenario:\n" + scenario
		if simProfiles != "" {
			src += "sim:\n  profiles:\n" + simProfiles
		}
		_, err := scenarios.Parse("vocab.yaml", "", []byte(src), func(string) string { return "" })
		return err
	}
	exactly(t, "scenario: message.scenario[].channel", rundir.Channels(), func(w string) error {
		return parse(fmt.Sprintf("    - channel: %q\n", w), "")
	})
	// In a scenario file an empty condition_status is one not written: no condition.
	exactly(t, "scenario: failover.condition_status", rundir.ConditionStatuses(), func(w string) error {
		return parse(fmt.Sprintf("    - { channel: viber, failover: { ttl: 10, condition_status: %q } }\n    - channel: sms\n", w), "")
	}, "")
	exactly(t, "scenario: sim.profiles.<channel>", rundir.Channels(), func(w string) error {
		return parse("    - channel: sms\n", fmt.Sprintf("    %q: { median: 200ms, p95: 1s }\n", w))
	})
	exactly(t, "scenario: sim.profiles.sms.outcomes.<state>", rundir.DrawnStates(), func(w string) error {
		return parse("    - channel: sms\n", fmt.Sprintf("    sms: { outcomes: { %q: 10%% } }\n", w))
	})
}
