package scenarios

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/invopop/jsonschema"

	"github.com/msgload/msgload/rundir"
)

// Sentinel errors of the value parsers.
var (
	errBadRate     = errors.New("bad rate")
	errBadDuration = errors.New("bad duration")
	errBadPercent  = errors.New("bad percentage")
)

// Rate is a count per time window written "150/1m", "20/s", "100/min" or "5/10s".
// The zero Rate (Raw == "") means "not set".
type Rate struct {
	Raw   string        // as written
	Count float64       // requests per Per
	Per   time.Duration // the window
}

// parseRate parses a rate in the one rate grammar (rundir.parseRate): "N/W",
// N a non-negative number, W a Go duration ("1m", "10s", "500ms"), a bare Go
// unit ("s", "m", "h", "ms") or a unit name ("sec", "min", "hour").
func parseRate(s string) (Rate, error) {
	s = strings.TrimSpace(s)
	n, per, err := rundir.ParseRate(s)
	if err != nil {
		return Rate{}, fmt.Errorf("%w %q: %w", errBadRate, s, err)
	}
	return Rate{Raw: s, Count: n, Per: per}, nil
}

// PerSecond returns the rate in requests per second (0 when not set).
func (r Rate) PerSecond() float64 {
	if r.Per <= 0 {
		return 0
	}
	return r.Count / r.Per.Seconds()
}

// IsZero reports whether the rate is unset.
func (r Rate) IsZero() bool { return r.Raw == "" && r.Per == 0 }

// String returns the rate as written, or a canonical form.
func (r Rate) String() string {
	if r.Raw != "" {
		return r.Raw
	}
	if r.Per == 0 {
		return ""
	}
	return strconv.FormatFloat(r.Count, 'f', -1, 64) + "/" + shortDuration(r.Per)
}

// Scaled returns the rate with the same count over a window multiplied by f.
func (r Rate) Scaled(f float64) Rate {
	if r.IsZero() {
		return r
	}
	per := time.Duration(float64(r.Per) * f)
	if per <= 0 {
		per = 1
	}
	return Rate{Count: r.Count, Per: per}
}

func (r *Rate) setScalar(s string) error {
	v, err := parseRate(s)
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// MarshalJSON writes the rate as a string.
func (r Rate) MarshalJSON() ([]byte, error) { return json.Marshal(r.String()) }

// MarshalYAML writes the rate as written.
func (r Rate) MarshalYAML() (any, error) { return r.String(), nil }

// JSONSchema describes a rate for editors.
func (Rate) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: `^\s*[0-9.]+\s*/\s*(([0-9.]+(ns|us|µs|ms|s|m|h))+|s|sec|second|m|min|minute|h|hour)\s*$`,
		Description: "a count per window: 150/1m, 20/s, 100/min", Examples: []any{"150/1m", "20/s"}}
}

// Duration is a Go duration written "500ms", "2m", "1h30m".
type Duration struct {
	Raw string
	D   time.Duration
}

// parseDuration parses a non-negative Go duration; "0" is allowed.
func parseDuration(s string) (Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return Duration{Raw: s}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return Duration{}, fmt.Errorf("%w %q: want a number with a unit such as 500ms, 30s, 2m or 1h", errBadDuration, s)
	}
	if d < 0 {
		return Duration{}, fmt.Errorf("%w %q: must not be negative", errBadDuration, s)
	}
	return Duration{Raw: s, D: d}, nil
}

// IsZero reports whether the duration is unset.
func (d Duration) IsZero() bool { return d.Raw == "" && d.D == 0 }

func (d Duration) String() string {
	if d.Raw != "" {
		return d.Raw
	}
	return shortDuration(d.D)
}

// Scaled returns the duration multiplied by f.
func (d Duration) Scaled(f float64) Duration {
	if d.IsZero() {
		return d
	}
	return Duration{D: time.Duration(float64(d.D) * f)}
}

func (d *Duration) setScalar(s string) error {
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// MarshalYAML writes the duration as written.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// JSONSchema describes a duration for editors.
func (Duration) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: `^(0|([0-9.]+(ns|us|µs|ms|s|m|h))+)$`,
		Description: "a Go duration: 500ms, 30s, 2m, 1h30m", Examples: []any{"30s", "2m"}}
}

// Percent is a share written "5%" or as a fraction "0.05"; F is the fraction.
type Percent struct {
	Raw string
	F   float64
}

// parsePercent parses "5%", "0.5%" or a fraction between 0 and 1 ("0.05").
func parsePercent(s string) (Percent, error) {
	s = strings.TrimSpace(s)
	num, pct := strings.CutSuffix(s, "%")
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(f) {
		return Percent{}, fmt.Errorf("%w %q: want a percentage such as 5%% or a fraction such as 0.05", errBadPercent, s)
	}
	if pct {
		f /= 100
	}
	if f < 0 || f > 1 {
		return Percent{}, fmt.Errorf("%w %q: must be between 0%% and 100%%", errBadPercent, s)
	}
	return Percent{Raw: s, F: f}, nil
}

// IsZero reports whether the share is unset.
func (p Percent) IsZero() bool { return p.Raw == "" && p.F == 0 }

func (p Percent) String() string {
	if p.Raw != "" {
		return p.Raw
	}
	return strconv.FormatFloat(p.F*100, 'f', -1, 64) + "%"
}

func (p *Percent) setScalar(s string) error {
	v, err := parsePercent(s)
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// MarshalJSON writes the share as a string.
func (p Percent) MarshalJSON() ([]byte, error) { return json.Marshal(p.String()) }

// MarshalYAML writes the share as written.
func (p Percent) MarshalYAML() (any, error) { return p.String(), nil }

// JSONSchema describes a share for editors.
func (Percent) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "string", Pattern: `^[0-9.]+%$`},
		{Type: "number", Minimum: "0", Maximum: "1"},
	}, Description: "a share: 5% or 0.05", Examples: []any{"5%"}}
}

// shortDuration prints d without trailing zero units ("1m" rather than "1m0s").
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
