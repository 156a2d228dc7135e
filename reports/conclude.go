package reports

import (
	"encoding/json"
	"os"
)

// Conclude reads the run directory, analyses it and evaluates the thresholds
// run.json carries: the run's summary and verdict, every report's source. It
// writes rundir.LostFile, every lost message as the analysis settles it
// (lostList), and nothing else: the report files are the writers'
// (reports/render's Build). A threshold that does not compile is an error
// wrapping summary.ErrBadThreshold, and nothing is written.
func Conclude(dir string) (*Summary, error) {
	lost, err := createLostList(dir)
	if err != nil {
		return nil, err
	}
	defer lost.abort()
	a, err := analyzeKeep(os.DirFS(dir), dir, false, lost)
	if err != nil {
		return nil, err
	}
	s := a.s
	if err := s.Evaluate(s.thresholdExprs); err != nil {
		return nil, err
	}
	if err := lost.commit(s.Delivery.Measured); err != nil {
		return nil, err
	}
	return s, nil
}

// JSON is the whole run's summary.json: indented, ending in a newline.
func (w *RunSummary) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
