package render

import "github.com/msgload/msgload/reports"

// view is a run's summary as the writers read it: the analysis's result,
// with the writers' own methods beside it (report.html, report.md,
// junit.xml, the terminal, the charts).
type view struct{ *reports.Summary }
