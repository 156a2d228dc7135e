package httpserve

import (
	"net/http"
	"time"
)

// Timeouts are an http.Server's timeouts. A zero field keeps none: New is
// never given one by msgload.
type Timeouts struct {
	// ReadHeader bounds reading a request's headers.
	ReadHeader time.Duration
	// Read bounds reading a whole request, headers and body, from its first
	// byte: a client sending its body one byte a second is cut off here.
	Read time.Duration
	// Write bounds the time from the end of the request's headers to the end
	// of its answer: the handler's work and a client that does not read.
	Write time.Duration
	// Idle bounds a keep-alive connection between requests.
	Idle time.Duration
}

// Default are the timeouts of the simulator, the embedded sink and the
// metrics endpoints. Their requests are small (the simulator takes at most
// 1 MiB by default) and answered at once, so 30 s to send one and 60 s to
// answer it leave room for a loaded machine and for the simulator's
// configured latency (faults.latency stays well under a minute).
var Default = Timeouts{
	ReadHeader: 10 * time.Second,
	Read:       30 * time.Second,
	Write:      60 * time.Second,
	Idle:       2 * time.Minute,
}

// ProxyUpstream bounds one exchange through the record proxy (the upstream's
// answer and its body); replay.Recorder cancels the upstream request then.
const ProxyUpstream = 2 * time.Minute

// Proxy are the timeouts of the record proxy. It forwards to a real service
// and its write timeout runs while the upstream works, so it is the upstream
// bound plus a minute to pass the answer on; a request body may be up to the
// recorder's 8 MiB, so reading one gets a minute.
var Proxy = Timeouts{
	ReadHeader: 10 * time.Second,
	Read:       time.Minute,
	Write:      ProxyUpstream + time.Minute,
	Idle:       2 * time.Minute,
}

// maxHeaderBytes bounds a request's headers (net/http's default is 1 MiB).
const maxHeaderBytes = 64 << 10

// New returns a server of h with the timeouts t.
func New(h http.Handler, t Timeouts) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    maxHeaderBytes,
	}
}
