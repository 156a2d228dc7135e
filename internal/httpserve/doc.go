// Package httpserve builds the http.Server of every server msgload runs (the
// simulator, the embedded and the standalone sink, the record proxy, the
// metrics endpoints), so each has read, write and idle timeouts
// that a slow or stuck client cannot defeat: a client sending one byte a
// second is cut off at the read timeout, one that stops reading at the write
// timeout, one that keeps a connection open without a request at the idle
// timeout. Each kind of server has its Timeouts (Default, Proxy, the
// standalone sink's own).
//
// Every server msgload runs, the standalone sink included, is served and
// stopped the same way: Serve (or Start and Stop) serves in the background
// until the caller is done, then stops within a bound without waiting on
// connections that never sent a request (internal/shutdown), closes what the
// bound leaves, and returns the first real error, serving's own or the
// shutdown's.
package httpserve
