package render

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/msgload/msgload/reports/summary"
)

// driftText is the report's line of the drift: "request p95 grew 4 ms per
// 10 minutes; …".
func driftText(d *summary.Drift) string {
	const per = 600.0 // seconds: slopes are shown per 10 minutes
	part := func(what string, v *float64, unit func(float64) string) string {
		if v == nil {
			return what + ": " + noData
		}
		verb := "grew"
		switch {
		case *v == 0:
			return what + " did not move"
		case *v < 0:
			verb = "fell"
		}
		return fmt.Sprintf("%s %s %s per 10 minutes", what, verb, unit(math.Abs(*v)*per))
	}
	ms := func(x float64) string { return strconv.FormatFloat(x*1000, 'g', 3, 64) + " ms" }
	pct := func(x float64) string { return strconv.FormatFloat(x*100, 'g', 3, 64) + " points" }
	mem := ""
	if d.Memory != nil {
		// Only a run that sampled its target's memory has the slope; the
		// notes say when samples were missing.
		mem = "; " + part("target memory", d.Memory, mb)
	}
	notes := ""
	for _, n := range d.Notes {
		notes += "; " + n
	}
	return fmt.Sprintf("%s; %s; %s%s (%d windows of %s, Theil–Sen)%s",
		part("request p95", d.RequestsLatencyP95, ms), part("delivery p95", d.DeliveryLatencyP95, ms),
		part("error share", d.ErrorRate, pct), mem, d.Windows, time.Duration(d.Window*float64(time.Second)), notes)
}

// mb is a number of bytes in MB (10⁶ bytes, three significant digits).
func mb(x float64) string { return strconv.FormatFloat(x/1e6, 'g', 3, 64) + " MB" }
