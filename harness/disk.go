package harness

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// The disk guard. A soak's memory stays flat; its disk does not: every send
// and every event is on disk (README, Soak runs, "Sizes"), ~0.5–1.8 KB a
// message, so an hour at 1,000/s with callbacks writes ~6.6 GB. A disk that
// fills mid-run used to end the soak as an error: the attempt that could not
// be written stopped the sends, and run.json's end and the reports could
// not be written either. So the run keeps a reserve on its directory's disk:
//
//   - before it starts, a run whose disk has less free than the reserve is
//     refused, and one whose plan writes more than is free beyond the
//     reserve (scenarios.Plan.DiskBytes) is warned of on stderr;
//   - while it goes, the free space is looked at every second; below the
//     reserve, every part's sends stop (as a first Ctrl-C does: what was sent
//     is waited for through the grace period and reported), run.json records
//     it (rundir.DiskLow), and the run ends incomplete, the environment's
//     reason, never pass — with room left for its grace period's callbacks
//     and its reports.

// diskEvery is how often the guard looks at the free space.
const diskEvery = time.Second

// ErrDiskReserve: the run directory's disk has less free than the run's
// reserve; the run did not start.
var ErrDiskReserve = errors.New("disk reserve")

// diskReserve is the run's reserve in bytes, 0 for none.
func (o *Options) diskReserve() uint64 {
	switch {
	case o.DiskReserve < 0:
		return 0
	case o.DiskReserve == 0:
		return rundir.DefaultDiskReserve
	}
	return uint64(o.DiskReserve)
}

// diskFree is the free space of the disk that holds path, or would hold it
// (its nearest directory that exists).
func (o *Options) diskFree(path string) (uint64, error) {
	free := o.DiskFree
	if free == nil {
		free = rundir.FreeBytes
	}
	for {
		if _, err := os.Stat(path); err == nil || !errors.Is(err, os.ErrNotExist) {
			return free(path)
		}
		up := filepath.Dir(path)
		if up == path {
			return free(path)
		}
		path = up
	}
}

// checkDisk refuses a run whose output directory's disk has less free than
// the reserve, and warns when the plan writes more than is free beyond it.
// A disk whose free space cannot be read is no reason to refuse: the guard
// is then off, said on stderr.
func checkDisk(o *Options, planned int64) error {
	reserve := o.diskReserve()
	if reserve == 0 {
		return nil
	}
	free, err := o.diskFree(o.Out)
	if err != nil {
		fmt.Fprintf(o.Stderr, "msgload: %s: the free space of its disk is not known (%v): no disk reserve is kept\n", o.Out, err)
		return nil
	}
	if free < reserve {
		f, r := reports.DiskSizes(free, reserve)
		return fmt.Errorf("%w: %s: its disk has %s free, less than the %s the run keeps free (free space, or lower --disk-reserve)",
			ErrDiskReserve, o.Out, f, r)
	}
	if planned > 0 && uint64(planned) > free-reserve {
		fmt.Fprintf(o.Stderr, "msgload: the plan writes about %s to %s, and its disk has %s free: the sends stop when less than %s is left (--disk-reserve), and the run ends incomplete\n",
			humanize.Bytes(uint64(planned)), o.Out, humanize.Bytes(free), humanize.IBytes(reserve))
	}
	return nil
}

// watchDisk looks at the free space of dir's disk every diskEvery until ctx
// ends; the first time it is below the reserve, it stops the sends (stops)
// and says so on stderr. It returns at once when the run keeps no reserve.
func watchDisk(ctx context.Context, o *Options, dir string, stops *sendStop) {
	reserve := o.diskReserve()
	if reserve == 0 {
		return
	}
	t := time.NewTicker(diskEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		free, err := o.diskFree(dir)
		if err != nil || free >= reserve {
			continue // unreadable now: checkDisk said so at the start if it always is
		}
		stops.tripDisk(rundir.DiskLow{At: o.Now().UTC(), Path: dir, Free: free, Reserve: reserve})
		f, r := reports.DiskSizes(free, reserve)
		fmt.Fprintf(o.Stderr, "\nmsgload: %s: its disk has %s free, less than the %s reserve: no new sends, waiting the grace period for what was sent; the run ends incomplete\n",
			dir, f, r)
		return
	}
}

// registerDisk serves the part's disk on /metrics with the run's labels, as
// the embedded sink's series (DiskMetrics).
func (r *partRun) registerDisk() {
	if r.reg == nil {
		return
	}
	_ = DiskMetrics(r.embeddedReg(), r.dir, r.o.diskReserve(), r.o.diskFree) // registered already (a test's registry): left as it is
}

// DiskMetrics registers a run directory's disk on reg:
// msgload_run_disk_free_bytes, the free space of dir's disk read at each
// scrape (free, rundir.FreeBytes when nil), and
// msgload_run_disk_reserve_bytes, the reserve the run keeps (0: none), so
// that the overview dashboard shows a soak's disk going down to the line
// under which its sends stop.
func DiskMetrics(reg prometheus.Registerer, dir string, reserve uint64, free func(string) (uint64, error)) error {
	if free == nil {
		free = rundir.FreeBytes
	}
	err := reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "msgload_run_disk_free_bytes",
		Help: "Bytes free on the disk of the run directory, read at each scrape; the sends stop when it falls under msgload_run_disk_reserve_bytes.",
	}, func() float64 {
		n, err := free(dir)
		if err != nil {
			return math.NaN()
		}
		return float64(n)
	}))
	return errors.Join(err, reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "msgload_run_disk_reserve_bytes",
		Help: "Bytes the run keeps free on the disk of its directory (msgload run --disk-reserve; 0: none).",
	}, func() float64 { return float64(reserve) })))
}
