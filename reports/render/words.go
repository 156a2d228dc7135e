package render

import (
	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/summary"
)

// The writers name the analysis's types and words as the analysis does
// (reports/summarywork.go names the contract's the same way), so that the
// writers read as they did inside package reports.
type (
	percentiles = summary.Percentiles
	clientLimit = summary.ClientLimit
	funnelStage = summary.FunnelStage
	truthReport = summary.TruthReport
	outcomes    = summary.Outcomes
)

const (
	noData      = summary.NoData
	notMeasured = summary.NotMeasured
)

var (
	dur           = summary.Dur
	showRate      = summary.ShowRate
	num           = reports.Num
	twoDecimals   = reports.TwoDecimals
	plural        = reports.Plural
	mdEscape      = reports.MDEscape
	thresholdText = reports.ThresholdText
	spacedDur     = reports.SpacedDur
	secondsLimit  = reports.SecondsLimit
)
