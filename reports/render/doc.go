// Package render writes a run's reports from its analysis (package
// reports): summary.json, report.html (one self-contained page, its charts
// drawn by the embedded uPlot), the charts as SVG files, report.md,
// junit.xml, the short terminal summary, the whole run's reports of a run
// with parts and a characterisation's report.html. Build is the one way a
// run's reports are built: reports.Conclude, then WriteFiles. The writers
// decide nothing — every figure, verdict and reason is the analysis's; they
// only say it.
package render
