package replay

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/msgload/msgload/internal/httpserve"
)

// shutdownTimeout bounds how long Serve waits for requests in flight when its
// context ends.
const shutdownTimeout = 5 * time.Second

// Serve runs rec on ln until ctx ends, then stops taking connections, lets the
// requests in flight finish (at most shutdownTimeout), and closes rec so every
// queued exchange is written and flushed. Connections that have not started a
// request (a client's spare keep-alive dial) are closed at once.
func Serve(ctx context.Context, ln net.Listener, rec *Recorder) error {
	// the proxy's write timeout covers the upstream's answer (httpserve.Proxy)
	err := httpserve.Serve(ctx, ln, httpserve.New(rec, httpserve.Proxy), shutdownTimeout)
	closeErr := rec.Close()
	if err != nil {
		return fmt.Errorf("recorder: %w", err)
	}
	return closeErr
}
