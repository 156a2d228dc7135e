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
	return fmt.Sprintf("%s; %s; %s (%d windows of %s, Theil–Sen)",
		part("request p95", d.RequestsLatencyP95, ms), part("delivery p95", d.DeliveryLatencyP95, ms),
		part("error share", d.ErrorRate, pct), d.Windows, time.Duration(d.Window*float64(time.Second)))
}
