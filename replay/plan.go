package replay

import "time"

// plan is what replaying the sends of one API will do, for `msgload validate`
// and the scenario plan of `load.profile: replay`.
type plan struct {
	Sends         int64         // messages (first attempts) the replay sends
	Duration      time.Duration // from the first to the last send, scaled
	RatePerSecond float64       // mean sends per second over Duration (0 when Duration is 0)
	PeakPerSecond float64       // most sends in any one-second window, scaled
	Clients       []string      // recorded clients, in order of first appearance
}

// planOf returns the plan of replaying the sends of api (apiMessaging or
// apiNotify) in reqs (sorted, as Load returns them) at speed.
func planOf(reqs []Request, api string, speed float64) plan {
	if !(speed > 0) {
		speed = 1
	}
	var p plan
	var offs []time.Duration
	seen := map[string]bool{}
	for _, r := range reqs {
		if r.API != api || r.Op != OpSend {
			continue
		}
		offs = append(offs, time.Duration(float64(r.Offset)/speed))
		if r.ClientID != "" && !seen[r.ClientID] {
			seen[r.ClientID] = true
			p.Clients = append(p.Clients, r.ClientID)
		}
	}
	p.Sends = int64(len(offs))
	if len(offs) == 0 {
		return p
	}
	p.Duration = offs[len(offs)-1] - offs[0]
	if p.Duration > 0 {
		p.RatePerSecond = float64(len(offs)) / p.Duration.Seconds()
	}
	peak := 0
	for lo, hi := 0, 0; hi < len(offs); hi++ {
		for offs[hi]-offs[lo] >= time.Second {
			lo++
		}
		peak = max(peak, hi-lo+1)
	}
	p.PeakPerSecond = float64(peak)
	return p
}
