package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/msgload/msgload/internal/testnet"
)

// needProgram returns path, or skips when it is absent; under CI=true its
// absence fails the test.
func needProgram(t *testing.T, path string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required when CI=true: %v", path, err)
		}
		t.Skipf("%s not installed (Debian package %s); skipping", path, filepath.Base(path))
	}
	return path
}

// TestPromtoolCheckConfig runs the real promtool on the shipped configuration.
func TestPromtoolCheckConfig(t *testing.T) {
	promtool := needProgram(t, "/usr/bin/promtool")
	out, err := exec.Command(promtool, "check", "config", "prometheus.yml").CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check config prometheus.yml: %v\n%s", err, out)
	}
}

type promConfig struct {
	Global struct {
		ScrapeInterval string `yaml:"scrape_interval"`
	} `yaml:"global"`
	ScrapeConfigs []struct {
		JobName       string `yaml:"job_name"`
		StaticConfigs []struct {
			Targets []string `yaml:"targets"`
		} `yaml:"static_configs"`
	} `yaml:"scrape_configs"`
}

type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		NetworkMode string            `yaml:"network_mode"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		Build       *struct {
			Context    string `yaml:"context"`
			Dockerfile string `yaml:"dockerfile"`
		} `yaml:"build"`
	} `yaml:"services"`
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// flagValue returns the value of --name in args ("--name value" or "--name=value").
func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == "--"+name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// checkAgreement says where compose.yaml and prometheus.yml disagree: Prometheus
// must scrape the addresses the sim and sink services listen on and the
// attacker's default metrics address, Grafana's datasource must point at
// Prometheus's listen address, every service must use host networking, and
// every mounted path must exist (paths relative to this directory).
func checkAgreement(pc promConfig, cf composeFile) []string {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	targets := map[string][]string{}
	for _, sc := range pc.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			targets[sc.JobName] = append(targets[sc.JobName], st.Targets...)
		}
	}
	for _, name := range []string{"prometheus", "grafana", "sim", "sink"} {
		if _, ok := cf.Services[name]; !ok {
			bad("compose.yaml has no service %s", name)
		}
	}
	rows := []struct {
		job, addr string // the scrape job and the address it must scrape
		why       string
	}{
		{"msgload-sim", flagValue(cf.Services["sim"].Command, "addr"), "the sim service's --addr"},
		{"msgload-sink", flagValue(cf.Services["sink"].Command, "addr"), "the sink service's --addr"},
		{"msgload-attack", "127.0.0.1:9464", "msgload run --metrics-addr's default"},
	}
	for _, r := range rows {
		if r.addr == "" {
			bad("%s: no address found (%s)", r.job, r.why)
			continue
		}
		if !slices.Contains(targets[r.job], r.addr) {
			bad("job %s scrapes %v, want %s (%s)", r.job, targets[r.job], r.addr, r.why)
		}
	}
	for name, s := range cf.Services {
		if s.NetworkMode != "host" {
			bad("service %s: network_mode %q: the loopback targets of prometheus.yml need host networking", name, s.NetworkMode)
		}
		for _, v := range s.Volumes {
			host, _, _ := strings.Cut(v, ":")
			if !strings.HasPrefix(host, ".") {
				continue // a named volume
			}
			if _, err := os.Stat(host); err != nil {
				bad("service %s mounts %s: %v", name, host, err)
			}
		}
	}
	promAddr := flagValue(cf.Services["prometheus"].Command, "web.listen-address")
	if got := cf.Services["grafana"].Environment["PROMETHEUS_URL"]; promAddr == "" || got != "http://"+promAddr {
		bad("grafana PROMETHEUS_URL %q, want http://%s (prometheus --web.listen-address)", got, promAddr)
	}
	if b := cf.Services["sim"].Build; b == nil || b.Dockerfile != "deploy/Dockerfile" {
		bad("sim service must build deploy/Dockerfile")
	} else if _, err := os.Stat(filepath.Join(b.Context, b.Dockerfile)); err != nil {
		bad("sim build: %v", err)
	}
	if cf.Services["sink"].Image != cf.Services["sim"].Image {
		bad("sink image %q differs from the sim's %q built here", cf.Services["sink"].Image, cf.Services["sim"].Image)
	}
	return errs
}

// TestComposeAgreesWithPrometheus checks the shipped pair, then that the
// check catches each kind of drift: every row edits one file's text and names
// the words the complaint must hold.
func TestComposeAgreesWithPrometheus(t *testing.T) {
	promSrc, err := os.ReadFile("prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	composeSrc, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	parse := func(p, c string) (promConfig, composeFile) {
		var pc promConfig
		var cf composeFile
		if err := yaml.Unmarshal([]byte(p), &pc); err != nil {
			t.Fatalf("prometheus.yml: %v", err)
		}
		if err := yaml.Unmarshal([]byte(c), &cf); err != nil {
			t.Fatalf("compose.yaml: %v", err)
		}
		return pc, cf
	}
	if errs := checkAgreement(parse(string(promSrc), string(composeSrc))); len(errs) > 0 {
		t.Errorf("shipped files disagree:\n%s", strings.Join(errs, "\n"))
	}
	rows := []struct {
		name           string
		file, old, new string
		want           string
	}{
		// the sim moved to another port but Prometheus still scrapes 8081
		{"sim port", "compose", `"127.0.0.1:8081"]`, `"127.0.0.1:9081"]`, "job msgload-sim scrapes"},
		// the attacker job lost its target
		{"attack target", "prometheus", `"127.0.0.1:9464"`, `"127.0.0.1:9465"`, "job msgload-attack"},
		// Prometheus listens elsewhere than Grafana looks
		{"datasource", "compose", "PROMETHEUS_URL: http://127.0.0.1:9090", "PROMETHEUS_URL: http://127.0.0.1:9091", "PROMETHEUS_URL"},
		// a bridge network breaks every loopback target
		{"network", "compose", "network_mode: host\n    command:\n      - --config.file", "network_mode: bridge\n    command:\n      - --config.file", "host networking"},
		// a mount of a folder that does not exist
		{"mount", "compose", "../grafana/dashboards:", "../grafana/dashbords:", "mounts ../grafana/dashbords"},
	}
	for _, r := range rows {
		p, c := string(promSrc), string(composeSrc)
		target := &c
		if r.file == "prometheus" {
			target = &p
		}
		if !strings.Contains(*target, r.old) {
			t.Fatalf("%s: text %q not in %s", r.name, r.old, r.file)
		}
		*target = strings.Replace(*target, r.old, r.new, 1)
		errs := strings.Join(checkAgreement(parse(p, c)), "\n")
		if !strings.Contains(errs, r.want) {
			t.Errorf("%s: complaints %q do not mention %q", r.name, errs, r.want)
		}
	}
}

// start runs a program until the test ends, and returns its output buffer.
func start(t *testing.T, name string, args ...string) *bytes.Buffer {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s %v output:\n%s", filepath.Base(name), args, out.String())
		}
	})
	return &out
}

// waitOK polls url until it answers 200; the limit only bounds a broken setup.
func waitOK(t *testing.T, u string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(u)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never answered 200 (last error %v)", u, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestComposeServicesRun starts what compose.yaml starts, without Docker: the
// msgload binary with the sim and sink services' own commands (ports moved to
// free ones, /data to a temporary directory), promtool check metrics on their
// /metrics, then a real Prometheus with deploy/prometheus.yml (same addresses
// moved) that must find both targets up.
func TestComposeServicesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds msgload and starts Prometheus; not in -short")
	}
	promtool := needProgram(t, "/usr/bin/promtool")
	prometheus := needProgram(t, "/usr/bin/prometheus")
	var cf composeFile
	readYAML(t, "compose.yaml", &cf)

	bin := filepath.Join(t.TempDir(), "msgload")
	build := exec.Command("go", "build", "-o", bin, "../cmd/msgload")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	moved := map[string]string{} // compose address → free address
	dataDir := t.TempDir()
	for _, name := range []string{"sim", "sink"} {
		args := slices.Clone(cf.Services[name].Command)
		for i, a := range args {
			if i > 0 && args[i-1] == "--addr" {
				moved[a] = testnet.FreeAddr(t)
				args[i] = moved[a]
			}
			if i > 0 && args[i-1] == "--data" {
				args[i] = dataDir
			}
		}
		start(t, bin, args...)
		addr := args[slices.Index(args, "--addr")+1]
		waitOK(t, "http://"+addr+"/healthz")
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		check := exec.Command(promtool, "check", "metrics")
		check.Stdin = bytes.NewReader(body)
		if out, err := check.CombinedOutput(); err != nil {
			t.Errorf("%s: promtool check metrics: %v\n%s", name, err, out)
		}
	}

	cfg, err := os.ReadFile("prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(cfg)
	for from, to := range moved {
		text = strings.ReplaceAll(text, `"`+from+`"`, `"`+to+`"`)
	}
	text = strings.ReplaceAll(text, "scrape_interval: 5s", "scrape_interval: 1s")
	text = strings.ReplaceAll(text, "scrape_timeout: 4s", "scrape_timeout: 900ms")
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	promAddr := testnet.FreeAddr(t)
	start(t, prometheus, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	waitOK(t, "http://"+promAddr+"/-/ready")

	// Wait for both standalone targets to be scraped up (bounded).
	deadline := time.Now().Add(60 * time.Second)
	for {
		up := targetsUp(t, promAddr)
		if up["msgload-sim"] && up["msgload-sink"] {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("targets up after 60s: %v; want msgload-sim and msgload-sink", up)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// targetsUp asks Prometheus which jobs have a healthy target.
func targetsUp(t *testing.T, promAddr string) map[string]bool {
	t.Helper()
	resp, err := http.Get("http://" + promAddr + "/api/v1/targets?" + url.Values{"state": {"active"}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			ActiveTargets []struct {
				Labels map[string]string `json:"labels"`
				Health string            `json:"health"`
			} `json:"activeTargets"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(fmt.Errorf("decode targets: %w", err))
	}
	up := map[string]bool{}
	for _, tg := range r.Data.ActiveTargets {
		if tg.Health == "up" {
			up[tg.Labels["job"]] = true
		}
	}
	return up
}
