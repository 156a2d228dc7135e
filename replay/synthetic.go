package replay

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"time"
)

// Synthetic is one request of a recording a program writes rather than the
// recording proxy: msgload characterise's probes that need a schedule the
// pacer cannot make (resends of one key at chosen delays, a token held at
// growing ages) write one and replay it through the harness.
type Synthetic struct {
	At     time.Duration // from the recording's start
	Method string
	Path   string
	Client string // the scenario client that sends it ("" = any)
	Body   []byte // sent as application/json
}

// WriteSynthetic writes reqs as a recording (the format ReadRecording
// reads, so one reader serves both) to path, mode 0600 (bodies hold
// recipients and texts), started at start and naming upstream as its source.
func WriteSynthetic(path string, start time.Time, upstream string, reqs []Synthetic) error {
	var b bytes.Buffer
	line := func(v any) error {
		j, err := marshalLine(v)
		if err != nil {
			return err
		}
		b.Write(j)
		return nil
	}
	if err := line(header{Format: FormatName, Version: FormatVersion, Started: start, Upstream: upstream}); err != nil {
		return err
	}
	for _, r := range reqs {
		body, enc := encodeBody(r.Body)
		ex := exchange{Time: start.Add(r.At), Offset: int64(r.At), Method: r.Method, Path: r.Path, Client: r.Client,
			Header: http.Header{"Content-Type": {"application/json"}}, Body: body, BodyEncoding: enc, Code: http.StatusOK}
		if err := line(ex); err != nil {
			return err
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		return fmt.Errorf("recording: %w", err)
	}
	return nil
}
