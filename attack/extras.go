package attack

import (
	"bytes"
	"cmp"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/msgload/msgload/rundir"
)

// extras sends Options.Extra, each at began + At, until the run stops.
func (e *engine) extras(began time.Time) {
	xs := slices.Clone(e.o.Extra)
	slices.SortStableFunc(xs, func(a, b Extra) int { return cmp.Compare(a.At, b.At) })
	for i := range xs {
		x := &xs[i]
		at := began.Add(x.At)
		if d := time.Until(at); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-e.halt.Done():
				t.Stop()
				return
			}
		} else if e.halt.Err() != nil {
			return
		}
		e.wg.Add(1)
		go func() { defer e.wg.Done(); e.extra(x, at) }()
	}
}

// extra sends one extra request and records it (seq 0, its own op).
func (e *engine) extra(x *Extra, intended time.Time) {
	c := e.clients[0]
	if x.Client != "" {
		c = e.byID[x.Client]
	}
	a := &rundir.Attempt{API: e.o.API, Op: x.Op, Client: c.ID, Attempt: 1, Intended: intended}
	u := strings.TrimRight(e.o.BaseURL, "/") + x.Path
	var body io.Reader
	if len(x.Body) > 0 {
		body = bytes.NewReader(x.Body)
	}
	req, err := http.NewRequest(x.Method, u, body)
	if err != nil {
		a.Sent = time.Now()
		a.Outcome, a.Class, a.Error = rundir.OutcomeFail, rundir.ClassOther, "build request: "+err.Error()
		e.writeAs(c, a, x.Method, u)
		return
	}
	for k, vs := range x.Header {
		req.Header[k] = slices.Clone(vs)
	}
	var b []byte
	if len(x.Body) > 0 {
		b = x.Body
	}
	e.exchangeReq(e.halt, c, a, x.Method, u, b, noSlot, req)
	e.writeAs(c, a, x.Method, u)
}
