package attack

import "net/http"

// The buffers each connection of the engine's transport holds for its whole
// life (net/http's default is 4 KiB each way, vegeta's too). A run opens a
// connection per message in flight at its busiest moment — up to the
// in-flight cap, 1,024 by default, whenever the target or the machine
// stalls — and keeps them, so their buffers are most of the attack's peak
// memory and of its spread between runs (issue 23). The exchanges are small
// (a messaging send ~500 bytes each way, a notification with its bearer token
// ~1.5 KiB out), so smaller buffers cost no extra system call for them; a
// larger answer or request is read or written in more calls, the same bytes.
const (
	connReadBuffer  = 1 << 10
	connWriteBuffer = 2 << 10
)

// sizeConnBuffers sets tr's per-connection buffers to the engine's sizes.
func sizeConnBuffers(tr *http.Transport) {
	tr.ReadBufferSize = connReadBuffer
	tr.WriteBufferSize = connWriteBuffer
}
