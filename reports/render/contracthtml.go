package render

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"

	"github.com/msgload/msgload/reports"
)

// contractTmpl is report.html of a characterisation: the verdict, one table
// row per rule (what was found with its interval or why it cannot be told,
// what was expected, the verdict, the evidence), then the probes — in the
// run report's style (its head, its verdict colours). Parsed on first use,
// as htmlTmpl: every msgload process links it, only characterise writes it.
var contractTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("contract").Funcs(tmplFuncs).Parse(htmlHead + `<h1>msgload — contract of {{.C.Name}} <span class="v {{.Class}}">{{.Verdict}}</span></h1>
<p class="muted">{{.C.API}} API, target {{.C.Target}}; {{.C.Sent}} of {{.C.Budget}} requests of the budget sent; {{.C.Start}} – {{.C.End}}</p>
{{if .C.Reasons}}<ul class="reasons">{{range .C.Reasons}}<li>{{inline .}}</li>{{end}}</ul>{{end}}
<h2>Contract</h2>
<table class="contract" id="contract"><tr><th>Rule</th><th>Found</th><th>Expected</th><th>Verdict</th><th>Evidence</th></tr>
{{range .Rows}}<tr><td><code>{{.Rule}}</code></td><td>{{.Found}}{{if .Because}}<br><span class="muted">cannot tell, because {{.Because}}</span>{{end}}</td><td>{{.Expected}}</td><td><span class="v {{.Class}}">{{.Verdict}}</span>{{if .Reason}}<br>{{.Reason}}{{end}}</td><td>{{if .Evidence}}<ul class="evidence">{{range .Evidence}}<li>{{.}}</li>{{end}}</ul>{{end}}</td></tr>
{{end}}</table>
<h2>Probes</h2>
<table class="probes" id="probes"><tr><th>Probe</th><th>What</th><th>Requests (planned)</th><th>Run</th></tr>
{{range .C.Probes}}<tr><td>{{.Name}}</td><td>{{.What}}</td><td>{{.Sent}} ({{.Planned}})</td><td>{{.Verdict}}{{if .Err}} {{.Err}}{{end}}{{range .Reasons}}<br>{{.}}{{end}}</td></tr>
{{end}}</table>
<p class="muted">Each probe is a run of its own, with its report, in its directory; contract.json holds every finding.</p>
</body></html>
`))
})

// contractRow is one rule as the page shows it.
type contractRow struct {
	Rule, Found, Because, Expected, Verdict, Class, Reason string
	Evidence                                               []string
}

// ContractHTML writes report.html of a characterisation: one self-contained
// page with the contract's table of findings and its probes.
func ContractHTML(w io.Writer, c *reports.Contract) error {
	var rows []contractRow
	for _, f := range c.Findings {
		found := f.Value
		if f.Value == reports.CannotTell {
			found = ""
		}
		if f.Low != nil && f.High != nil && *f.Low != *f.High {
			found += fmt.Sprintf(" [%g, %g]", *f.Low, *f.High)
		}
		rows = append(rows, contractRow{Rule: f.Rule, Found: strings.TrimSpace(found), Because: f.Because, Expected: f.Expected,
			Verdict: strings.ToUpper(f.Verdict), Class: strings.ToLower(f.Verdict), Reason: f.Reason, Evidence: f.Evidence})
	}
	return contractTmpl().Execute(w, map[string]any{"C": c, "Rows": rows, "Verdict": strings.ToUpper(c.Verdict), "Class": strings.ToLower(c.Verdict),
		"Title": "msgload contract " + c.Name})
}
