package reports

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/msgload/msgload/rundir"
)

// lostList is rundir.LostFile being written by the final analysis of a
// build: each lost message goes to it as finishMessage settles it, so nothing
// is held per message (a run of 18 M messages may lose all of them). It is
// written beside the old file and replaces it whole (commit), or not at all.
type lostList struct {
	f   *rundir.AtomicFile
	w   *bufio.Writer
	err error // the first error writing it: the build fails on it
}

// createLostList starts writing dir's rundir.LostFile.
func createLostList(dir string) (*lostList, error) {
	f, err := rundir.CreateAtomic(filepath.Join(dir, rundir.LostFile))
	if err != nil {
		return nil, err
	}
	return &lostList{f: f, w: bufio.NewWriter(f)}, nil
}

// add writes a lost message's line; nil (an analysis that lists none: a
// checkpoint, a pass before the last) writes nothing.
func (l *lostList) add(m rundir.LostMessage) {
	if l == nil || l.err != nil {
		return
	}
	b, err := json.Marshal(m)
	if err == nil {
		_, err = l.w.Write(append(b, '\n'))
	}
	l.err = err
}

// commit makes the written list dir's rundir.LostFile; when delivery was not
// measured (measured false) nothing was lost, nor listed: the file of an
// earlier build is removed instead, so no empty list reads as "none lost".
func (l *lostList) commit(measured bool) error {
	if !measured {
		l.abort()
		err := os.Remove(filepath.Join(filepath.Dir(l.f.Name()), rundir.LostFile))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", rundir.LostFile, err)
		}
		return nil
	}
	if l.err == nil {
		l.err = l.w.Flush()
	}
	if l.err != nil {
		return fmt.Errorf("write %s: %w", rundir.LostFile, l.err)
	}
	return l.f.Commit()
}

// abort drops the list written so far (after commit it does nothing).
func (l *lostList) abort() { l.f.Abort() }

// listLost writes message seq, lost (late: its final status came after the
// deadline), to the build's list with what finishMessage knows of it.
func (a *analyzer) listLost(seq int64, m *msg, md *msgDelivery, late bool) {
	if a.lost == nil || !a.s.Delivery.Measured {
		return
	}
	l := rundir.LostMessage{Seq: seq, Late: late, FirstSent: unixTime(m.first)}
	if late {
		l.Channel, l.State, l.FinalAt = a.chans.names[md.finalChan], a.states.names[md.finalState], unixTime(md.terminalAt)
	} else {
		l.Channel = a.censoredChannel(md) // "" (omitted) with no record and no chain
	}
	a.lost.add(l)
}

// unixTime is ns as a UTC time; nil for 0 (not known).
func unixTime(ns int64) *time.Time {
	if ns == 0 {
		return nil
	}
	t := time.Unix(0, ns).UTC()
	return &t
}
