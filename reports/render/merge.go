package render

import "github.com/msgload/msgload/reports"

// Merge is reports.Merge (one run directory in out from the shards' dirs,
// concluded) with its report files written: what `msgload report --merge`
// does, so that `msgload report out` builds the same again.
func Merge(out string, dirs []string, o reports.MergeOptions) (*reports.Summary, error) {
	s, err := reports.Merge(out, dirs, o)
	if err != nil {
		return nil, err
	}
	if err := WriteFiles(out, s); err != nil {
		return nil, err
	}
	return s, nil
}
