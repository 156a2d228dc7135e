// Package grafana ships msgload's Grafana dashboards and provisioning files and
// the code that keeps them honest: it reads a dashboard, lists every PromQL
// query in it (panels, template variables, annotations), expands template
// variables, names the metrics a query uses and draws a dashboard's layout as
// SVG for the README, since Grafana itself does not run in CI.
package grafana
