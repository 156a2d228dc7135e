package replay

import "fmt"

// Test helpers of this package for the tests that replay through the harness
// (package replay_test: the harness imports replay).
var (
	FakeUpstream     = fakeUpstream
	StartRecorder    = startRecorder
	SendTestTraffic  = sendTestTraffic
	RecordAgainstSim = recordAgainstSim
	Quantile         = quantile
)

const TestClientSecret = testClientSecret

var TestToken = testToken

// CallbackCounter stands in for a standalone sink.
type CallbackCounter = callbackCounter

func NewCallbackCounter() *CallbackCounter {
	return &callbackCounter{hits: map[string]int{}, runs: map[string]int{}}
}

func (c *callbackCounter) RunCount(run string) int { return c.runCount(run) }

func (c *callbackCounter) Hits() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprint(c.hits)
}

// Load is LoadWith without options, for the tests.
func Load(path, format string) ([]Request, error) {
	return LoadWith(path, format, ReadOptions{})
}
