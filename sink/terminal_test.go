package sink

import (
	"testing"

	"github.com/msgload/msgload/rundir"
)

// TestTerminalStateCascade: with a chain viber → sms, a failure on viber is a
// step of the cascade, not the end of the message; on the last channel every
// final state ends it.
func TestTerminalStateCascade(t *testing.T) {
	tests := []struct {
		state    string
		idx, len int
		want     bool
	}{
		{StateDelivered, 0, 2, true},     // delivered on viber: done, sms is never tried
		{StateSeen, 0, 2, true},          // seen on viber: done
		{StateNotDelivered, 0, 2, false}, // not delivered on viber: the service goes on with sms
		{StateFailed, 0, 2, false},       // not sent on viber: goes on with sms
		{StateExpired, 0, 2, false},      // ttl over on viber: goes on with sms
		{StateNotDelivered, 1, 2, true},  // not delivered on the last channel: the end
		{StateExpired, 1, 2, true},       // expired on the last channel: the end
		{StateNotDelivered, -1, 2, true}, // unknown channel: cannot be a step
		{StateExpired, 0, 1, true},       // a single channel is the last one
		{StateFailed, 0, 0, true},        // no chain carried in the tag
	}
	for _, tt := range tests {
		if got := rundir.EndsMessage(tt.state, tt.idx, tt.len); got != tt.want {
			t.Errorf("EndsMessage(%s, %d, %d) = %v, want %v", tt.state, tt.idx, tt.len, got, tt.want)
		}
	}
}
