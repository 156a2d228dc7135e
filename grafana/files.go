package grafana

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
)

// Files holds the dashboards and provisioning files as shipped, so a binary or
// a test can read them without knowing where the source tree is.
//
//go:embed dashboards/*.json provisioning
var Files embed.FS

// datasourceUID is the fixed uid of the provisioned Prometheus datasource.
const datasourceUID = "msgload-prometheus"

// datasourceVariable is the template variable every panel names as its
// datasource, written ${DS_PROMETHEUS} in the JSON.
const datasourceVariable = "DS_PROMETHEUS"

// loadDashboards reads and parses every dashboards/*.json in fsys, sorted by
// file name.
func loadDashboards(fsys fs.FS) ([]*dashboard, error) {
	names, err := fs.Glob(fsys, "dashboards/*.json")
	if err != nil {
		return nil, fmt.Errorf("list dashboards: %w", err)
	}
	sort.Strings(names)
	out := make([]*dashboard, 0, len(names))
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, fmt.Errorf("read dashboard %s: %w", n, err)
		}
		d, err := parseDashboard(b)
		if err != nil {
			return nil, fmt.Errorf("dashboard %s: %w", path.Base(n), err)
		}
		d.File = path.Base(n)
		out = append(out, d)
	}
	return out, nil
}
