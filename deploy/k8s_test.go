package deploy

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/msgload/msgload/grafana"
)

var update = flag.Bool("update", false, "rewrite deploy/k8s/grafana-dashboards.yaml from grafana/dashboards")

const dashboardsConfigMap = "k8s/grafana-dashboards.yaml"

// renderDashboardsConfigMap writes the dashboards as one ConfigMap, each JSON
// file a key, as a literal block so the file stays readable and diffable.
func renderDashboardsConfigMap() ([]byte, error) {
	names, err := fs.Glob(grafana.Files, "dashboards/*.json")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.WriteString("# Generated from grafana/dashboards/*.json by\n#   go test ./deploy -run TestK8sDashboards -update\n# Do not edit: change the JSON and regenerate.\n")
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: grafana-dashboards\ndata:\n")
	for _, n := range names {
		src, err := fs.ReadFile(grafana.Files, n)
		if err != nil {
			return nil, err
		}
		b.WriteString("  " + path.Base(n) + ": |\n")
		for _, line := range strings.Split(strings.TrimRight(string(src), "\n"), "\n") {
			if line == "" {
				b.WriteString("\n")
				continue
			}
			b.WriteString("    " + line + "\n")
		}
	}
	return b.Bytes(), nil
}

// TestK8sDashboards keeps the dashboards ConfigMap equal to the shipped JSON
// and checks that it decodes back to exactly those files.
func TestK8sDashboards(t *testing.T) {
	got, err := renderDashboardsConfigMap()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(dashboardsConfigMap, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(dashboardsConfigMap)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run go test ./deploy -run TestK8sDashboards -update", dashboardsConfigMap)
	}
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal(want, &cm); err != nil {
		t.Fatal(err)
	}
	names, _ := fs.Glob(grafana.Files, "dashboards/*.json")
	if len(cm.Data) != len(names) {
		t.Errorf("ConfigMap holds %d dashboards, grafana/dashboards %d", len(cm.Data), len(names))
	}
	for _, n := range names {
		src, _ := fs.ReadFile(grafana.Files, n)
		if cm.Data[path.Base(n)] != string(src) {
			t.Errorf("%s: ConfigMap value differs from the file once decoded", path.Base(n))
		}
	}
}

// k8sObject is the part of a manifest the checks read.
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		Selector map[string]any `yaml:"selector"`
		Ports    []struct {
			Name       string `yaml:"name"`
			Port       int    `yaml:"port"`
			TargetPort any    `yaml:"targetPort"`
		} `yaml:"ports"`
		Template struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec struct {
				Containers []struct {
					Name  string   `yaml:"name"`
					Image string   `yaml:"image"`
					Args  []string `yaml:"args"`
					Ports []struct {
						Name          string `yaml:"name"`
						ContainerPort int    `yaml:"containerPort"`
					} `yaml:"ports"`
				} `yaml:"containers"`
				Volumes []struct {
					Name      string `yaml:"name"`
					ConfigMap *struct {
						Name string `yaml:"name"`
					} `yaml:"configMap"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// readManifests decodes every document of the kustomization's resources.
func readManifests(t *testing.T) (objs []k8sObject, generated []string) {
	t.Helper()
	var k struct {
		Resources          []string `yaml:"resources"`
		ConfigMapGenerator []struct {
			Name  string   `yaml:"name"`
			Files []string `yaml:"files"`
		} `yaml:"configMapGenerator"`
	}
	readYAML(t, "k8s/kustomization.yaml", &k)
	for _, g := range k.ConfigMapGenerator {
		generated = append(generated, g.Name)
		for _, f := range g.Files {
			if _, err := os.Stat(filepath.Join("k8s", f)); err != nil {
				t.Errorf("configMapGenerator %s: %v", g.Name, err)
			}
		}
	}
	for _, r := range k.Resources {
		f, err := os.Open(filepath.Join("k8s", r))
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(f)
		for {
			var o k8sObject
			err := dec.Decode(&o)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", r, err)
			}
			if o.Kind == "" || o.Metadata.Name == "" {
				t.Errorf("%s: a document without kind or name", r)
			}
			objs = append(objs, o)
		}
		f.Close()
	}
	return objs, generated
}

// TestK8sManifests checks the manifests hang together: promtool accepts the
// in-cluster Prometheus configuration; every scrape target is a Service of
// that name and port whose selector matches a workload exposing the target
// port; every ConfigMap a pod mounts exists; the sim and sink run the same
// commands as in compose.yaml, listening on all interfaces on the same ports;
// Grafana's provisioning equals grafana/provisioning.
func TestK8sManifests(t *testing.T) {
	promtool := needProgram(t, "/usr/bin/promtool")
	if out, err := exec.Command(promtool, "check", "config", "k8s/prometheus.yml").CombinedOutput(); err != nil {
		t.Errorf("promtool check config k8s/prometheus.yml: %v\n%s", err, out)
	}
	objs, generated := readManifests(t)
	byKind := map[string]map[string]k8sObject{}
	for _, o := range objs {
		if byKind[o.Kind] == nil {
			byKind[o.Kind] = map[string]k8sObject{}
		}
		byKind[o.Kind][o.Metadata.Name] = o
	}
	workloads := []k8sObject{}
	for _, kind := range []string{"Deployment", "Job"} {
		for _, o := range byKind[kind] {
			workloads = append(workloads, o)
		}
	}

	var pc promConfig
	readYAML(t, "k8s/prometheus.yml", &pc)
	for _, sc := range pc.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			for _, target := range st.Targets {
				host, port, _ := net.SplitHostPort(target)
				svc, ok := byKind["Service"][host]
				if !ok {
					t.Errorf("job %s scrapes %s: no Service %s", sc.JobName, target, host)
					continue
				}
				found := false
				for _, p := range svc.Spec.Ports {
					if port == itoa(p.Port) {
						found = servesPort(svc, p.TargetPort, workloads)
					}
				}
				if !found {
					t.Errorf("job %s scrapes %s: Service %s has no port %s reaching a container port of a selected workload", sc.JobName, target, host, port)
				}
			}
		}
	}

	configMaps := slices.Clone(generated)
	for name := range byKind["ConfigMap"] {
		configMaps = append(configMaps, name)
	}
	for _, w := range workloads {
		for _, v := range w.Spec.Template.Spec.Volumes {
			if v.ConfigMap != nil && !slices.Contains(configMaps, v.ConfigMap.Name) {
				t.Errorf("%s mounts ConfigMap %s, defined nowhere", w.Metadata.Name, v.ConfigMap.Name)
			}
		}
	}

	var cf composeFile
	readYAML(t, "compose.yaml", &cf)
	for _, svc := range []string{"sim", "sink"} {
		w, ok := byKind["Deployment"]["msgload-"+svc]
		if !ok || len(w.Spec.Template.Spec.Containers) != 1 {
			t.Errorf("no single-container Deployment msgload-%s", svc)
			continue
		}
		args := w.Spec.Template.Spec.Containers[0].Args
		compose := cf.Services[svc].Command
		_, kport, _ := net.SplitHostPort(flagValue(args, "addr"))
		khost, _, _ := net.SplitHostPort(flagValue(args, "addr"))
		_, cport, _ := net.SplitHostPort(flagValue(compose, "addr"))
		if khost != "0.0.0.0" || kport != cport {
			t.Errorf("msgload-%s listens on %s, want 0.0.0.0:%s (compose's port, reachable through its Service)", svc, flagValue(args, "addr"), cport)
		}
		if len(args) != len(compose) || args[0] != compose[0] {
			t.Errorf("msgload-%s args %v differ from compose's %v beyond the address", svc, args, compose)
		}
	}

	cm, ok := byKind["ConfigMap"]["grafana-provisioning"]
	if !ok {
		t.Fatal("no ConfigMap grafana-provisioning")
	}
	for key, file := range map[string]string{
		"datasource.yaml": "../grafana/provisioning/datasources/prometheus.yaml",
		"dashboards.yaml": "../grafana/provisioning/dashboards/msgload.yaml",
	} {
		var inCluster, shipped any
		if err := yaml.Unmarshal([]byte(cm.Data[key]), &inCluster); err != nil {
			t.Fatalf("grafana-provisioning %s: %v", key, err)
		}
		readYAML(t, file, &shipped)
		if !reflect.DeepEqual(inCluster, shipped) {
			t.Errorf("grafana-provisioning %s differs from %s", key, file)
		}
	}
}

// servesPort reports whether the Service's targetPort (a name or a number)
// is a container port of a workload its selector matches.
func servesPort(svc k8sObject, target any, workloads []k8sObject) bool {
	for _, w := range workloads {
		labels := w.Spec.Template.Metadata.Labels
		match := len(svc.Spec.Selector) > 0
		for k, v := range svc.Spec.Selector {
			if labels[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		for _, c := range w.Spec.Template.Spec.Containers {
			for _, p := range c.Ports {
				if p.Name == target || itoa(p.ContainerPort) == itoa(target) {
					return true
				}
			}
		}
	}
	return false
}

// itoa writes a port given as a number or a name.
func itoa(v any) string { return fmt.Sprint(v) }
