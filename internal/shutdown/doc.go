// Package shutdown stops an http.Server without waiting on connections that
// never started a request.
//
// http.Server.Shutdown counts a connection in StateNew as busy for its first
// 5 seconds. HTTP clients open such connections on purpose (a spare dial
// that lost the race to an idle keep-alive connection, a health probe), so a
// shutdown bounded by a few seconds times out with nothing in flight, and a
// run or a recording reports an error it did not have. Track follows a
// server's connections; Tracker.Shutdown runs the server's Shutdown and closes
// the fresh ones until it returns. Requests in flight still finish.
package shutdown
