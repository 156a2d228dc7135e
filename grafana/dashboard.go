package grafana

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// errNotDashboard is returned when the JSON is not a dashboard object.
var errNotDashboard = errors.New("not a Grafana dashboard")

// dashboard is the part of a Grafana dashboard model msgload checks and draws.
// Raw keeps the whole document for the rules that look at any key.
type dashboard struct {
	File       string          `json:"-"`
	ID         json.RawMessage `json:"id"`
	UID        string          `json:"uid"`
	Title      string          `json:"title"`
	Inputs     json.RawMessage `json:"__inputs"`
	Panels     []panel         `json:"panels"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
	Annotations struct {
		List []annotation `json:"list"`
	} `json:"annotations"`
	Links []link         `json:"links"`
	Raw   map[string]any `json:"-"`
}

// panel is one panel or row; rows may hold collapsed panels.
type panel struct {
	ID         int             `json:"id"`
	Type       string          `json:"type"`
	Title      string          `json:"title"`
	Datasource json.RawMessage `json:"datasource"`
	GridPos    gridPos         `json:"gridPos"`
	Targets    []target        `json:"targets"`
	Repeat     string          `json:"repeat"`
	Panels     []panel         `json:"panels"`
	// FieldConfig.Defaults.NoValue is what the panel shows when its queries
	// return nothing for the selected run, instead of an empty frame.
	FieldConfig struct {
		Defaults struct {
			NoValue string `json:"noValue"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
}

// gridPos is a panel's place on Grafana's 24-column grid.
type gridPos struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

// target is one query of a panel.
type target struct {
	RefID      string          `json:"refId"`
	Expr       string          `json:"expr"`
	Datasource json.RawMessage `json:"datasource"`
	Format     string          `json:"format"`
}

// variable is a template variable.
type variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"`
	Datasource json.RawMessage `json:"datasource"`
	AllValue   *string         `json:"allValue"`
	IncludeAll bool            `json:"includeAll"`
	Multi      bool            `json:"multi"`
	Sort       int             `json:"sort"`
	Current    struct {
		Value any `json:"value"`
	} `json:"current"`
}

// link is one of the dashboard's links to other dashboards.
type link struct {
	Type        string `json:"type"`
	IncludeVars bool   `json:"includeVars"`
	KeepTime    bool   `json:"keepTime"`
}

// Grafana's sort codes of a query variable's options.
const (
	sortAlphaAsc  = 1
	sortAlphaDesc = 2
)

// annotation is an annotation query.
type annotation struct {
	Name       string          `json:"name"`
	Expr       string          `json:"expr"`
	Datasource json.RawMessage `json:"datasource"`
	BuiltIn    int             `json:"builtIn"`
}

// parseDashboard decodes a dashboard model.
func parseDashboard(b []byte) (*dashboard, error) {
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("decode dashboard: %w", err)
	}
	if err := json.Unmarshal(b, &d.Raw); err != nil {
		return nil, fmt.Errorf("decode dashboard: %w", err)
	}
	if d.Raw == nil {
		return nil, errNotDashboard
	}
	if _, ok := d.Raw["panels"]; !ok {
		return nil, fmt.Errorf("%w: no panels", errNotDashboard)
	}
	return &d, nil
}

// AllPanels lists every panel, rows' nested panels included, rows themselves too.
func (d *dashboard) AllPanels() []panel {
	var out []panel
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

// query is one PromQL expression of a dashboard and where it lives.
type query struct {
	Where string // "panel 3 \"Answers by code\" A", "variable api", "annotation Run start"
	Panel string // the panel's title; "" for variables and annotations
	Expr  string
	// Variable is true for a label_values(...) variable query: Expr then holds
	// the series selector (or metric) inside label_values.
	Variable bool
}

var labelValuesRE = regexp.MustCompile(`^\s*label_values\(\s*(.*?)\s*(?:,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*)?\)\s*$`)

// Queries lists every PromQL expression in the dashboard: panel targets,
// annotation queries and the selector of label_values variable queries.
func (d *dashboard) Queries() []query {
	var out []query
	for _, p := range d.AllPanels() {
		for _, t := range p.Targets {
			if strings.TrimSpace(t.Expr) == "" {
				continue
			}
			out = append(out, query{Where: fmt.Sprintf("panel %d %q %s", p.ID, p.Title, t.RefID), Panel: p.Title, Expr: t.Expr})
		}
	}
	for _, a := range d.Annotations.List {
		if a.Expr != "" {
			out = append(out, query{Where: "annotation " + a.Name, Expr: a.Expr})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q := v.QueryString()
		if m := labelValuesRE.FindStringSubmatch(q); m != nil {
			out = append(out, query{Where: "variable " + v.Name, Expr: m[1], Variable: true})
		} else if q != "" {
			out = append(out, query{Where: "variable " + v.Name, Expr: q, Variable: true})
		}
	}
	return out
}

// QueryString is the text of a variable's query, whether Grafana stored it as
// a string or as an object with a "query" key.
func (v variable) QueryString() string {
	if len(v.Query) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(v.Query, &s) == nil {
		return s
	}
	var o struct {
		Query string `json:"query"`
	}
	if json.Unmarshal(v.Query, &o) == nil {
		return o.Query
	}
	return ""
}

// LabelValuesLabel is the label a label_values variable lists, "" otherwise.
func (v variable) LabelValuesLabel() string {
	if m := labelValuesRE.FindStringSubmatch(v.QueryString()); m != nil {
		return m[2]
	}
	return ""
}

// datasourceUID reads a datasource reference, either {"uid": "..."} or a bare
// string (older dashboards).
func datasourceRef(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		UID string `json:"uid"`
	}
	if json.Unmarshal(raw, &o) == nil {
		return o.UID
	}
	return ""
}

var varRE = regexp.MustCompile(`\$\{([a-zA-Z_][a-zA-Z0-9_]*)(?::[a-z]+)?\}|\$([a-zA-Z_][a-zA-Z0-9_]*)|\[\[([a-zA-Z_][a-zA-Z0-9_]*)\]\]`)

// expand replaces template variables ($name, ${name}, ${name:fmt}, [[name]])
// by vars[name], and Grafana's built-ins $__rate_interval, $__interval and
// $__range by durations derived from step and rng. An unknown variable is
// left as it is, so the parser reports it.
func expand(expr string, vars map[string]string, step, rng time.Duration) string {
	builtin := map[string]string{
		"__rate_interval": promDuration(max(4*step, step+15*time.Second)),
		"__interval":      promDuration(step),
		"__range":         promDuration(rng),
		"__range_s":       fmt.Sprint(int64(rng.Seconds())),
		"__interval_ms":   fmt.Sprint(step.Milliseconds()),
	}
	return varRE.ReplaceAllStringFunc(expr, func(m string) string {
		sm := varRE.FindStringSubmatch(m)
		name := sm[1] + sm[2] + sm[3]
		if v, ok := builtin[name]; ok {
			return v
		}
		if v, ok := vars[name]; ok {
			return v
		}
		return m
	})
}

// promDuration writes d in Prometheus's duration syntax, whole seconds or ms.
func promDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", int64(d/time.Second))
	}
	return fmt.Sprintf("%dms", d.Milliseconds())
}

// VariableNames lists the names of the dashboard's template variables.
func (d *dashboard) VariableNames() []string {
	var out []string
	for _, v := range d.Templating.List {
		out = append(out, v.Name)
	}
	sort.Strings(out)
	return out
}

// SampleVariables gives every template variable a value that makes the
// queries valid PromQL without a Prometheus: its current value when it has
// one, else ".*" (what Grafana sends for "All").
func (d *dashboard) SampleVariables() map[string]string {
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		val := ".*"
		if s, ok := v.Current.Value.(string); ok && s != "" && s != "$__all" {
			val = s
		}
		vars[v.Name] = val
	}
	return vars
}
