package rundir

import (
	"slices"
	"testing"
)

// TestChainEnds is the end-of-message rule of messaging-api.md, row by row.
func TestChainEnds(t *testing.T) {
	viberSMS := Chain{{"viber", StateDelivered}, {"sms", ""}}
	viberSeen := Chain{{"viber", StateSeen}, {"sms", ""}}
	noFailover := Chain{{"viber", ""}, {"sms", ""}}
	three := Chain{{"push", StateSeen}, {"viber", StateDelivered}, {"sms", ""}}
	tests := []struct {
		name  string
		chain Chain
		state string
		item  int
		ends  bool
		steps bool
	}{
		{"delivered on viber: done, sms never tried", viberSMS, StateDelivered, 0, true, false},
		{"seen on viber satisfies DELIVERED", viberSMS, StateSeen, 0, true, false},
		{"not delivered on viber: on to sms", viberSMS, StateNotDelivered, 0, false, true},
		{"not sent on viber: on to sms", viberSMS, StateFailed, 0, false, true},
		{"ttl over on viber: on to sms", viberSMS, StateExpired, 0, false, true},
		{"not delivered on the last channel: the end", viberSMS, StateNotDelivered, 1, true, false},
		{"expired on the last channel: the end", viberSMS, StateExpired, 1, true, false},
		{"delivered under a SEEN condition: the service still waits", viberSeen, StateDelivered, 0, false, false},
		{"seen under a SEEN condition: the end", viberSeen, StateSeen, 0, true, false},
		{"expired under a SEEN condition: on to sms", viberSeen, StateExpired, 0, false, true},
		{"no failover on viber: its failure ends the message", noFailover, StateNotDelivered, 0, true, false},
		{"no failover on viber: delivered ends it", noFailover, StateDelivered, 0, true, false},
		{"middle item with DELIVERED condition", three, StateDelivered, 1, true, false},
		{"first item waits for SEEN", three, StateDelivered, 0, false, false},
		{"a channel the chain does not name: by state alone", viberSMS, StateNotDelivered, -1, true, false},
		{"a single channel is the last one", Chain{{"sms", ""}}, StateExpired, 0, true, false},
		{"no chain: every final state ends", nil, StateFailed, -1, true, false},
		{"a state of no status record ends nothing", viberSMS, "ACCEPTED", 1, false, false},
	}
	for _, tt := range tests {
		if got := tt.chain.Ends(tt.state, tt.item); got != tt.ends {
			t.Errorf("%s: Ends(%s, %d) = %v, want %v", tt.name, tt.state, tt.item, got, tt.ends)
		}
		if got := tt.chain.FailsOver(tt.state, tt.item); got != tt.steps {
			t.Errorf("%s: FailsOver(%s, %d) = %v, want %v", tt.name, tt.state, tt.item, got, tt.steps)
		}
	}
}

func TestChainEncoding(t *testing.T) {
	c := Chain{{"viber", StateSeen}, {"vkok", StateDelivered}, {"sms", ""}}
	s := c.Strings()
	if want := []string{"viber:SEEN", "vkok:DELIVERED", "sms"}; !slices.Equal(s, want) {
		t.Fatalf("Strings = %q, want %q", s, want)
	}
	if got := ParseChain(s); !slices.Equal(got, c) {
		t.Fatalf("ParseChain(%q) = %v, want %v", s, got, c)
	}
	for _, bad := range [][]string{{"viber:NOT_DELIVERED", "sms"}, {"", "sms"}, {":SEEN"}} {
		if got := ParseChain(bad); got != nil {
			t.Errorf("ParseChain(%q) = %v, want nil (unknown chain)", bad, got)
		}
	}
	// A record without a channel belongs to the item the message is on.
	if got := c.Item("", 1); got != 1 {
		t.Errorf("Item(\"\", 1) = %d", got)
	}
	if got := c.Item("sms", 0); got != 2 {
		t.Errorf("Item(sms, 0) = %d", got)
	}
}

// TestChainPlace: a record without a channel is on the item the message was
// on, unless its state says it must be on a channel outside the record's enum.
func TestChainPlace(t *testing.T) {
	smsVkok := Chain{{"sms", StateSeen}, {"vkok", ""}}
	vkokSMS := Chain{{"vkok", StateSeen}, {"sms", ""}}
	tests := []struct {
		chain          Chain
		channel, state string
		cur, want      int
	}{
		{smsVkok, "sms", StateDelivered, 1, 0},         // a channel places it, wherever the message is
		{smsVkok, "", StateDelivered, 0, 1},            // no channel: not sms, so vkok, even if sms's EXPIRED is yet to come
		{smsVkok, "", StateSeen, 1, 1},                 //
		{smsVkok, "", StateExpired, 0, 0},              // FAILED, EXPIRED may omit any channel: where the message is
		{smsVkok, "", StateFailed, 1, 1},               //
		{vkokSMS, "", StateDelivered, 0, 0},            //
		{vkokSMS, "", StateDelivered, 1, 1},            // no item from cur fits: cur, as Item
		{Chain{{"sms", ""}}, "", StateDelivered, 0, 0}, //
		{nil, "", StateDelivered, 0, -1},               // no chain
		{smsVkok, "viber", StateDelivered, 0, -1},      // a channel outside the chain
	}
	for _, tt := range tests {
		if got := tt.chain.Place(tt.channel, tt.state, tt.cur); got != tt.want {
			t.Errorf("%v.Place(%q, %s, %d) = %d, want %d", tt.chain, tt.channel, tt.state, tt.cur, got, tt.want)
		}
	}
}
