package sim

import (
	"sync"
	"time"
	_ "time/tzdata" // recipient time zones must load on any machine

	"github.com/msgload/msgload/internal/e164"
)

var (
	zoneMu    sync.Mutex
	zoneCache = map[string]*time.Location{}
)

// recipientZone derives the time zone of an E.164 number; UTC when unknown.
// The prefix table is decoded on the first call: only a scenario with a
// recipient-local schedule makes one.
func recipientZone(msisdn string) *time.Location {
	name := e164.Zone(msisdn)
	if name == "" {
		return time.UTC
	}
	zoneMu.Lock()
	defer zoneMu.Unlock()
	if loc, ok := zoneCache[name]; ok {
		return loc
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		loc = time.UTC
	}
	zoneCache[name] = loc
	return loc
}

// sendTime is when a message accepted at now may first be sent under sc.
func (sc schedule) sendTime(now time.Time, msisdn string) time.Time {
	loc := time.UTC
	if sc.local {
		loc = recipientZone(msisdn)
	}
	t := now
	if !sc.sendAfter.IsZero() {
		after := sc.sendAfter
		if sc.afterLocal {
			// The wall clock given is the recipient's.
			w := sc.sendAfter
			after = time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), loc)
		}
		if after.After(t) {
			t = after
		}
	}
	if !sc.hasWindow {
		return t
	}
	return nextInWindow(t.In(loc), sc.start, sc.stop)
}

// nextInWindow returns the earliest moment at or after t inside the daily
// window [start, stop) of t's zone; a window with stop < start spans midnight.
func nextInWindow(t time.Time, start, stop time.Duration) time.Time {
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
	at := func(d time.Time, off time.Duration) time.Time {
		h := int(off / time.Hour)
		m := int(off % time.Hour / time.Minute)
		s := int(off % time.Minute / time.Second)
		return time.Date(d.Year(), d.Month(), d.Day(), h, m, s, 0, d.Location())
	}
	for i := -1; i <= 2; i++ {
		d := day.AddDate(0, 0, i)
		from := at(d, start)
		to := at(d, stop)
		if stop < start {
			to = at(d.AddDate(0, 0, 1), stop)
		}
		if !t.Before(to) {
			continue
		}
		if t.Before(from) {
			return from.UTC()
		}
		return t.UTC()
	}
	return t.UTC()
}
