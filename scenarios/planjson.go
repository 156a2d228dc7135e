package scenarios

import "math"

// PlanJSON is the documented JSON shape of a plan, what `msgload validate
// --json` prints: snake_case names and seconds, as in summary.json (rates are
// requests per second, shares are fractions, a limit is its count per window).
type PlanJSON struct {
	Name          string           `json:"name"`
	API           string           `json:"api"`
	Profile       string           `json:"profile"`
	DurationS     float64          `json:"duration_s"`     // how long requests are sent (0 for replay)
	Rate          float64          `json:"rate"`           // mean planned rate, all clients, per second
	PeakRate      float64          `json:"peak_rate"`      // highest planned rate, per second
	Requests      int64            `json:"requests"`       // messages planned by the load profile
	Messages      int64            `json:"messages"`       // really sent: requests capped by maxMessages
	Probes        int64            `json:"probes"`         // idempotency probes expected
	Retries       int64            `json:"retries"`        // retries expected from the simulator's faults
	Attempts      int64            `json:"attempts"`       // messages + probes + retries
	Limit         *LimitJSON       `json:"limit"`          // per client; null: none
	LimitEnforced *LimitJSON       `json:"limit_enforced"` // what the embedded simulator enforces; null: none
	Mode          string           `json:"mode"`           // respect | exceed
	Expected429   float64          `json:"expected_429"`   // share of first attempts expected to get 429
	DiskBytes     int64            `json:"disk_bytes"`     // about what the run writes to its directory
	Clients       []clientPlanJSON `json:"clients"`
	Parts         []PlanJSON       `json:"parts,omitempty"` // a file with parts: one plan each, the above are totals
}

// LimitJSON is a rate limit: requests per window.
type LimitJSON struct {
	Requests float64 `json:"requests"`
	WindowS  float64 `json:"window_s"`
}

// clientPlanJSON is one client's share of the plan.
type clientPlanJSON struct {
	ClientID       string  `json:"client_id"`
	Requests       int64   `json:"requests"`
	Rate           float64 `json:"rate"`             // per second, mean
	PeakPerWindow  float64 `json:"peak_per_window"`  // most requests in any window of the limit's length
	LimitPerWindow float64 `json:"limit_per_window"` // the limit's count (0: no limit)
	Expected429    float64 `json:"expected_429"`
}

// round6 keeps six decimals, as summary.json does.
func round6(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return math.Round(f*1e6) / 1e6
}

func limitJSON(r Rate) *LimitJSON {
	if r.Count == 0 || r.Per == 0 {
		return nil
	}
	return &LimitJSON{Requests: r.Count, WindowS: r.Per.Seconds()}
}

// JSON is the plan in its documented JSON shape.
func (p Plan) JSON() PlanJSON {
	j := PlanJSON{
		Name: p.Name, API: p.API, Profile: p.Profile, DurationS: round6(p.Duration.Seconds()),
		Rate: round6(p.RatePerSecond), PeakRate: round6(p.PeakPerSecond),
		Requests: p.Requests, Messages: p.Messages, Probes: p.Probes, Retries: p.Retries, Attempts: p.Attempts,
		Limit: limitJSON(p.Limit), LimitEnforced: limitJSON(p.LimitEnforced), Mode: p.Mode,
		Expected429: round6(p.Expected429), DiskBytes: p.DiskBytes, Clients: []clientPlanJSON{},
	}
	for _, c := range p.Clients {
		j.Clients = append(j.Clients, clientPlanJSON{ClientID: c.ID, Requests: c.Requests, Rate: round6(c.RatePerSecond),
			PeakPerWindow: round6(c.PeakPerWindow), LimitPerWindow: round6(c.LimitPerWindow), Expected429: round6(c.Expected429)})
	}
	for _, part := range p.Parts {
		j.Parts = append(j.Parts, part.JSON())
	}
	return j
}
