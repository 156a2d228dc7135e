package replay

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgload/msgload/internal/httpserve"
	"github.com/msgload/msgload/internal/netguard"
)

// DefaultMaxBody is the largest body kept in a recording; a larger one is
// forwarded in full but not written (it could not be redacted safely).
const DefaultMaxBody = 8 << 20

// RecorderOptions configure a recording proxy.
type RecorderOptions struct {
	Upstream   *url.URL          // where requests go; required
	Out        io.Writer         // where the recording goes; required
	Redact     RedactOptions     //
	Transport  http.RoundTripper // nil: netguard.Transport() (no environment proxy)
	MaxBody    int64             // 0: DefaultMaxBody
	Queue      int               // exchanges waiting for the writer; 0: 65536
	QueueBytes int64             // body bytes waiting for the writer; 0: 256 MiB
	Now        func() time.Time  // nil: time.Now
	// UpstreamTimeout bounds one exchange with the upstream, its answer's
	// body included; 0: httpserve.ProxyUpstream. The server's write timeout
	// (httpserve.Proxy) is longer, so a slow answer is still passed on.
	UpstreamTimeout time.Duration
}

// Recorder is a reverse proxy that forwards every request unchanged to its
// upstream and writes one Exchange per request to its output, secrets removed.
// Handlers never block on the file: they hand exchanges to one writer goroutine
// and count what the queue (bounded in exchanges and in body bytes) could not take.
type Recorder struct {
	o        RecorderOptions
	red      *redactor
	proxy    *httputil.ReverseProxy
	started  time.Time
	ch       chan pending
	done     chan struct{}
	closed   atomic.Bool
	closeMu  sync.RWMutex // held for reading while a handler may still send
	written  atomic.Int64
	dropped  atomic.Int64
	queued   atomic.Int64 // body bytes in ch
	writeErr error
}

type pending struct {
	e        exchange
	reqBody  []byte
	respBody []byte
}

// NewRecorder writes the recording header to o.Out and returns the proxy.
func NewRecorder(o RecorderOptions) (*Recorder, error) {
	if o.Upstream == nil || o.Upstream.Scheme == "" || o.Upstream.Host == "" {
		return nil, fmt.Errorf("recorder: upstream must be an absolute URL")
	}
	if o.Out == nil {
		return nil, fmt.Errorf("recorder: no output")
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.Queue <= 0 {
		o.Queue = 65536
	}
	if o.QueueBytes <= 0 {
		o.QueueBytes = 256 << 20
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.UpstreamTimeout <= 0 {
		o.UpstreamTimeout = httpserve.ProxyUpstream
	}
	if o.Transport == nil {
		o.Transport = netguard.Transport()
	}
	r := &Recorder{o: o, red: newRedactor(o.Redact), started: o.Now(), ch: make(chan pending, o.Queue), done: make(chan struct{})}
	up := *o.Upstream
	up.User = nil // credentials in the upstream URL are neither forwarded in the header line nor recorded
	h := header{Format: FormatName, Version: FormatVersion, Started: r.started, Upstream: up.String(),
		Masked: o.Redact.MaskRecipients, Redacted: r.red.Fields()}
	line, err := marshalLine(h)
	if err != nil {
		return nil, fmt.Errorf("recorder: header: %w", err)
	}
	if _, err := o.Out.Write(line); err != nil {
		return nil, fmt.Errorf("recorder: write header: %w", err)
	}
	target := o.Upstream
	r.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			// Everything as sent, but for the Host header, which names the upstream
			// (a virtual host or TLS server name would refuse the proxy's own).
			pr.SetURL(target)
		},
		Transport:     o.Transport,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
			if f, ok := req.Context().Value(proxyErrKey{}).(*bool); ok {
				*f = true
			}
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	go r.writer()
	return r, nil
}

// Started is the time offsets count from.
func (r *Recorder) Started() time.Time { return r.started }

// Written is the number of exchanges written so far.
func (r *Recorder) Written() int64 { return r.written.Load() }

// Dropped is the number of exchanges not written because the writer could not
// keep up or the recorder was closing.
func (r *Recorder) Dropped() int64 { return r.dropped.Load() }

// Close stops taking exchanges, writes those queued and flushes the output. Call
// it after the HTTP server has shut down.
func (r *Recorder) Close() error {
	r.closeMu.Lock()
	if r.closed.Swap(true) {
		r.closeMu.Unlock()
		<-r.done
		return r.writeErr
	}
	close(r.ch)
	r.closeMu.Unlock()
	<-r.done
	return r.writeErr
}

func (r *Recorder) writer() {
	defer close(r.done)
	bw := bufio.NewWriterSize(r.o.Out, 256<<10)
	for p := range r.ch {
		r.queued.Add(-int64(len(p.reqBody) + len(p.respBody)))
		if r.writeErr != nil {
			r.dropped.Add(1)
			continue
		}
		r.red.Exchange(&p.e, p.reqBody, p.respBody)
		line, err := marshalLine(p.e)
		if err != nil {
			r.dropped.Add(1)
			continue
		}
		line = r.red.Scrub(line)
		if _, err := bw.Write(line); err != nil {
			r.writeErr = fmt.Errorf("write recording: %w", err)
			continue
		}
		r.written.Add(1)
		if len(r.ch) == 0 { // the queue is drained: flush, so a crash loses little
			if err := bw.Flush(); err != nil {
				r.writeErr = fmt.Errorf("flush recording: %w", err)
			}
		}
	}
	if err := bw.Flush(); err != nil && r.writeErr == nil {
		r.writeErr = fmt.Errorf("flush recording: %w", err)
	}
}

func (r *Recorder) enqueue(p pending) {
	r.closeMu.RLock()
	defer r.closeMu.RUnlock()
	if r.closed.Load() {
		r.dropped.Add(1)
		return
	}
	n := int64(len(p.reqBody) + len(p.respBody))
	if r.queued.Add(n) > r.o.QueueBytes {
		r.queued.Add(-n)
		r.dropped.Add(1)
		return
	}
	select {
	case r.ch <- p:
	default:
		r.queued.Add(-n)
		r.dropped.Add(1)
	}
}

// ServeHTTP forwards req and records the exchange.
func (r *Recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	arrived := r.o.Now()
	e := exchange{Time: arrived, Offset: int64(arrived.Sub(r.started)), Method: req.Method,
		Path: req.URL.EscapedPath(), Query: req.URL.RawQuery, Header: req.Header.Clone()}
	e.Client = clientFromAuthorization(req.Header.Get("Authorization"))
	if e.Client == "" {
		e.Client = clientFromQuery(req.URL.RawQuery)
	}

	var reqBody []byte
	keepReq := true
	if req.Body != nil && req.Body != http.NoBody {
		buf, err := io.ReadAll(io.LimitReader(req.Body, r.o.MaxBody+1))
		if err != nil {
			http.Error(w, "read request body", http.StatusBadRequest)
			e.Code, e.Error = http.StatusBadRequest, "read request body"
			r.enqueue(pending{e: e})
			return
		}
		if int64(len(buf)) > r.o.MaxBody {
			keepReq = false
			req.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(buf), req.Body), req.Body}
		} else {
			reqBody = buf
			req.Body = io.NopCloser(bytes.NewReader(buf))
		}
	}
	if enc := req.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		keepReq = false // an encoded body cannot be redacted: it is not written
	}
	if e.Client == "" && keepReq {
		e.Client = clientFromBody(req.Header.Get("Content-Type"), reqBody)
	}
	if !keepReq {
		reqBody = nil
		e.Error = "request body not recorded (too large or encoded)"
	}

	cw := &captureWriter{ResponseWriter: w, max: r.o.MaxBody}
	var upstreamFailed bool
	ctx, cancel := context.WithTimeout(context.WithValue(req.Context(), proxyErrKey{}, &upstreamFailed), r.o.UpstreamTimeout)
	defer cancel()
	// When the answer cannot be copied to the end (the client went away
	// mid-download, or the upstream's body broke off), ReverseProxy panics
	// with http.ErrAbortHandler to abort the connection. The upstream has
	// processed the request all the same: the exchange is written, with the
	// error, before the panic goes on.
	aborted := r.forward(cw, req.WithContext(ctx))
	if aborted {
		defer panic(http.ErrAbortHandler)
	}
	e.Code = cw.code
	if e.Code == 0 {
		e.Code = http.StatusOK
	}
	e.Latency = r.o.Now().Sub(arrived).Seconds()
	e.RespHeader = w.Header().Clone()
	respBody := cw.buf.Bytes()
	if cw.over {
		respBody = nil
	}
	if enc := e.RespHeader.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		respBody = nil
	}
	if upstreamFailed {
		e.Code, e.Error = 0, "upstream gave no answer"
	}
	if aborted || cw.writeErr != nil {
		// a cut answer is neither the upstream's body nor redactable as JSON
		respBody = nil
		switch {
		case cw.writeErr != nil:
			e.Error = "client aborted mid-download: " + cw.writeErr.Error()
		case req.Context().Err() != nil:
			// the client went away while the upstream was between two
			// writes: the upstream's read was cancelled for it, it did not break
			e.Error = "client aborted mid-download: " + context.Cause(req.Context()).Error()
		default:
			e.Error = "upstream answer broke off mid-body"
		}
	}
	r.enqueue(pending{e: e, reqBody: reqBody, respBody: respBody})
}

// forward runs the reverse proxy and reports whether it aborted the answer
// (panicked with http.ErrAbortHandler); any other panic goes on.
func (r *Recorder) forward(w http.ResponseWriter, req *http.Request) (aborted bool) {
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				panic(p)
			}
			aborted = true
		}
	}()
	r.proxy.ServeHTTP(w, req)
	return false
}

type proxyErrKey struct{}

// captureWriter keeps the status and (up to max) the body written through it.
type captureWriter struct {
	http.ResponseWriter
	code     int
	buf      bytes.Buffer
	max      int64
	over     bool
	writeErr error // the first error writing to the client
}

func (c *captureWriter) WriteHeader(code int) {
	if c.code == 0 && code >= 200 {
		c.code = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *captureWriter) Write(b []byte) (int, error) {
	if c.code == 0 {
		c.code = http.StatusOK
	}
	if !c.over {
		if int64(c.buf.Len()+len(b)) > c.max {
			c.over = true
			c.buf.Reset()
		} else {
			c.buf.Write(b)
		}
	}
	n, err := c.ResponseWriter.Write(b)
	if err != nil && c.writeErr == nil {
		c.writeErr = err
	}
	return n, err
}

// Unwrap lets http.ResponseController reach Flush and deadlines.
func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
