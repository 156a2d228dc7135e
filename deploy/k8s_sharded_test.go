package deploy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/msgload/msgload/scenarios"
	"github.com/msgload/msgload/sim"
)

// kustomizations are the directories kubectl kustomize renders: the stack,
// the sharded run on top of it, and the merge Job applied after the shards.
var kustomizations = []string{"k8s", "k8s-sharded", "k8s-sharded/merge"}

// rendered is one kustomization's output, decoded strictly into the
// k8s.io/api types.
type rendered struct {
	jobs        map[string]*batchv1.Job
	deployments map[string]*appsv1.Deployment
	services    map[string]*corev1.Service
	configMaps  map[string]*corev1.ConfigMap
	claims      map[string]*corev1.PersistentVolumeClaim
	secrets     map[string]*corev1.Secret
}

// kustomize renders dir with kubectl kustomize (kubectl, or Debian's
// kubernetes-client) and decodes every document strictly: an unknown field,
// a wrong type or a kind this test does not know fails.
func kustomize(t *testing.T, dir string) rendered {
	t.Helper()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("kubectl is required when CI=true (Debian package kubernetes-client): %v", err)
		}
		t.Skip("kubectl not installed (Debian package kubernetes-client); skipping")
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(kubectl, "kustomize", dir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, stderr.String())
	}
	r := rendered{jobs: map[string]*batchv1.Job{}, deployments: map[string]*appsv1.Deployment{},
		services: map[string]*corev1.Service{}, configMaps: map[string]*corev1.ConfigMap{}, claims: map[string]*corev1.PersistentVolumeClaim{},
		secrets: map[string]*corev1.Secret{}}
	for i, doc := range strings.Split("\n"+stdout.String(), "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("%s: document %d: %v", dir, i, err)
		}
		var obj interface{ GetName() string }
		var put func()
		switch head.APIVersion + " " + head.Kind {
		case "batch/v1 Job":
			o := &batchv1.Job{}
			obj, put = o, func() { r.jobs[o.Name] = o }
		case "apps/v1 Deployment":
			o := &appsv1.Deployment{}
			obj, put = o, func() { r.deployments[o.Name] = o }
		case "v1 Service":
			o := &corev1.Service{}
			obj, put = o, func() { r.services[o.Name] = o }
		case "v1 ConfigMap":
			o := &corev1.ConfigMap{}
			obj, put = o, func() { r.configMaps[o.Name] = o }
		case "v1 PersistentVolumeClaim":
			o := &corev1.PersistentVolumeClaim{}
			obj, put = o, func() { r.claims[o.Name] = o }
		case "v1 Secret":
			o := &corev1.Secret{}
			obj, put = o, func() { r.secrets[o.Name] = o }
		default:
			t.Fatalf("%s: document %d is a %s %s, which this test does not decode", dir, i, head.APIVersion, head.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			t.Fatalf("%s: %s %d does not decode strictly into the k8s.io/api type: %v", dir, head.Kind, i, err)
		}
		if obj.GetName() == "" {
			t.Fatalf("%s: a %s without a name", dir, head.Kind)
		}
		put()
	}
	return r
}

// TestK8sKustomizeStrict renders every kustomization with kubectl kustomize
// and decodes it strictly into the k8s.io/api types.
func TestK8sKustomizeStrict(t *testing.T) {
	for _, dir := range kustomizations {
		t.Run(dir, func(t *testing.T) {
			r := kustomize(t, dir)
			if len(r.jobs)+len(r.deployments) == 0 {
				t.Errorf("%s renders no workload", dir)
			}
		})
	}
}

func envOf(c corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

func mountsClaim(spec corev1.PodSpec, c corev1.Container, claim string) (mountPath string, ok bool) {
	for _, v := range spec.Volumes {
		if v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != claim {
			continue
		}
		for _, m := range c.VolumeMounts {
			if m.Name == v.Name {
				return m.MountPath, true
			}
		}
	}
	return "", false
}

// TestK8sShardedRun checks that the sharded run hangs together: an Indexed
// Job with completions = parallelism = N whose pods are told N
// (MSGLOAD_RUN_SHARDS; Kubernetes sets JOB_COMPLETION_INDEX) and share a run
// id; Prometheus scrapes exactly its N pods by their Indexed Job names through
// a headless Service of its subdomain (each shard labels its own run info
// with its shard), and every sink
// replica; the merge Job merges exactly shard-0 … shard-(N-1) of that run id
// and the sink replicas' logs, on the volume the shards and sinks write; the
// scenario is valid, its clients exist in the simulator, and there are enough
// of them for no client to span two shards.
func TestK8sShardedRun(t *testing.T) {
	r := kustomize(t, "k8s-sharded")
	m := kustomize(t, "k8s-sharded/merge")

	job, ok := r.jobs["msgload-shard"]
	if !ok {
		t.Fatal("no Job msgload-shard")
	}
	if j, ok := r.jobs["msgload-run"]; ok && (j.Spec.Suspend == nil || !*j.Spec.Suspend) {
		t.Error("the single run Job msgload-run runs in the sharded stack too")
	}
	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("msgload-shard: completionMode %v, want Indexed", s.CompletionMode)
	}
	if s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism {
		t.Fatalf("msgload-shard: completions %v, parallelism %v: want equal", s.Completions, s.Parallelism)
	}
	n := int(*s.Completions)
	pod := s.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("msgload-shard: %d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if e := envOf(c, "MSGLOAD_RUN_SHARDS"); e == nil || e.Value != strconv.Itoa(n) {
		t.Errorf("msgload-shard: MSGLOAD_RUN_SHARDS %+v, want %d (the completions)", e, n)
	}
	if e := envOf(c, "MSGLOAD_RUN_RUN_ID"); e == nil || e.ValueFrom == nil || e.ValueFrom.ConfigMapKeyRef == nil {
		t.Fatal("msgload-shard: the run id does not come from a ConfigMap all shards read")
	}
	runIDRef := *envOf(c, "MSGLOAD_RUN_RUN_ID").ValueFrom.ConfigMapKeyRef
	if len(c.Args) == 0 || c.Args[0] != "run" || flagValue(c.Args, "metrics-addr") != "0.0.0.0:9464" {
		t.Errorf("msgload-shard: args %v, want msgload run serving /metrics on 0.0.0.0:9464", c.Args)
	}
	out := flagValue(c.Args, "out")
	dataMount, ok := mountsClaim(pod, c, "msgload-data")
	if !ok || !strings.HasPrefix(out, dataMount+"/") {
		t.Fatalf("msgload-shard: --out %s is not on the shared volume (mounted at %q)", out, dataMount)
	}
	if _, ok := r.claims["msgload-data"]; !ok {
		t.Error("no PersistentVolumeClaim msgload-data")
	}
	if pod.SecurityContext == nil || pod.SecurityContext.FSGroup == nil {
		t.Error("msgload-shard: no fsGroup: the nonroot image cannot write the shared volume")
	}

	// Prometheus: each shard pod by name, through the headless Service of the subdomain.
	hs, ok := r.services[pod.Subdomain]
	if pod.Subdomain == "" || !ok || hs.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Fatalf("msgload-shard: subdomain %q is no headless Service", pod.Subdomain)
	}
	for k, v := range hs.Spec.Selector {
		if s.Template.Labels[k] != v {
			t.Errorf("Service %s does not select the shard pods (%s=%s)", hs.Name, k, v)
		}
	}
	var pc struct {
		ScrapeConfigs []struct {
			JobName       string `json:"job_name"`
			StaticConfigs []struct {
				Targets []string          `json:"targets"`
				Labels  map[string]string `json:"labels"`
			} `json:"static_configs"`
			DNSSDConfigs []struct {
				Names []string `json:"names"`
				Type  string   `json:"type"`
				Port  int      `json:"port"`
			} `json:"dns_sd_configs"`
		} `json:"scrape_configs"`
	}
	cm, ok := r.configMaps["prometheus-config"]
	if !ok {
		t.Fatal("no ConfigMap prometheus-config")
	}
	if err := yaml.Unmarshal([]byte(cm.Data["prometheus.yml"]), &pc); err != nil {
		t.Fatal(err)
	}
	// Every shard pod, found by DNS through the headless Service of the
	// subdomain (N is written only in the Job), without a target label
	// "shard": each shard labels its own msgload_run_info with its shard, and
	// a target label of that name would rename the pod's own to exported_shard.
	shardsScraped, sinkScraped := false, false
	for _, sc := range pc.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			for _, target := range st.Targets {
				if strings.Contains(target, pod.Subdomain) {
					t.Errorf("Prometheus scrapes shard %s by a static target: N would be written twice", target)
				}
			}
		}
		for _, d := range sc.DNSSDConfigs {
			for _, name := range d.Names {
				svc := r.services[strings.Split(name, ".")[0]]
				if svc == nil || svc.Spec.ClusterIP != corev1.ClusterIPNone {
					continue
				}
				switch {
				case svc.Name == pod.Subdomain && d.Port == 9464:
					shardsScraped = true
				case svc.Spec.Selector["app"] == "msgload-sink" && d.Port == 8082:
					sinkScraped = true
				}
			}
		}
	}
	if !shardsScraped {
		t.Error("Prometheus does not find the shards by DNS (dns_sd_configs on the headless Service of their subdomain, port 9464)")
	}
	if !sinkScraped {
		t.Error("Prometheus does not scrape every sink replica (dns_sd_configs on a headless Service of the sink pods, port 8082)")
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		if b, err := exec.Command(promtool, "check", "config", "k8s-sharded/prometheus.yml").CombinedOutput(); err != nil {
			t.Errorf("promtool check config k8s-sharded/prometheus.yml: %v\n%s", err, b)
		}
	}

	// Sink replicas, each logging to its own directory on the shared volume.
	sk, ok := r.deployments["msgload-sink"]
	if !ok || sk.Spec.Replicas == nil || *sk.Spec.Replicas < 2 {
		t.Fatalf("msgload-sink: want a Deployment of at least 2 replicas")
	}
	skc := sk.Spec.Template.Spec.Containers[0]
	skMount, ok := mountsClaim(sk.Spec.Template.Spec, skc, "msgload-data")
	data := flagValue(skc.Args, "data")
	if !ok || !strings.HasPrefix(data, skMount+"/") || !strings.HasSuffix(data, "/$(POD_NAME)") {
		t.Fatalf("msgload-sink: --data %s, want <shared volume>/…/$(POD_NAME)", data)
	}
	if e := envOf(skc, "POD_NAME"); e == nil || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Error("msgload-sink: POD_NAME is not the pod's name")
	}
	sinkLogs := strings.TrimPrefix(filepath.Dir(data), skMount) // relative to the volume

	// The merge: the run's directory and exactly its N shard directories.
	mj, ok := m.jobs["msgload-merge"]
	if !ok {
		t.Fatal("no Job msgload-merge")
	}
	mc := mj.Spec.Template.Spec.Containers[0]
	mMount, ok := mountsClaim(mj.Spec.Template.Spec, mc, "msgload-data")
	if !ok {
		t.Fatal("msgload-merge does not mount the shared volume msgload-data")
	}
	e := envOf(mc, "RUN_ID")
	if e == nil || e.ValueFrom == nil || e.ValueFrom.ConfigMapKeyRef == nil || *e.ValueFrom.ConfigMapKeyRef != runIDRef {
		t.Fatalf("msgload-merge: RUN_ID %+v, want the shards' run id %+v", e, runIDRef)
	}
	if len(mc.Args) == 0 || mc.Args[0] != "report" {
		t.Fatalf("msgload-merge: args %v, want msgload report --merge", mc.Args)
	}
	runDir := mMount + strings.TrimPrefix(out, dataMount) + "/$(RUN_ID)"
	if got := flagValue(mc.Args, "merge"); got != runDir {
		t.Errorf("msgload-merge: --merge %s, want %s", got, runDir)
	}
	if got := flagValue(mc.Args, "wait-for"); got != strconv.Itoa(n) {
		t.Errorf("msgload-merge: --wait-for %q, want the %d shards (derived from the run's directory)", got, n)
	}
	if dirs := positional(mc.Args[1:]); len(dirs) != 0 {
		t.Errorf("msgload-merge lists shard directories %v: with --wait-for they are derived", dirs)
	}
	if got := flagValue(mc.Args, "sink-log"); got != mMount+sinkLogs {
		t.Errorf("msgload-merge: --sink-log %s, want the sink replicas' directory %s", got, mMount+sinkLogs)
	}

	// The scenario: valid, its clients known to the simulator, enough of them.
	sc, ok := r.configMaps["msgload-sharded-scenario"]
	if !ok {
		t.Fatal("no ConfigMap msgload-sharded-scenario")
	}
	if !slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool { return v.ConfigMap != nil && v.ConfigMap.Name == sc.Name }) {
		t.Error("msgload-shard does not mount the scenario ConfigMap")
	}
	p := filepath.Join(t.TempDir(), "scenario.yaml")
	if err := os.WriteFile(p, []byte(sc.Data["scenario.yaml"]), 0o644); err != nil {
		t.Fatal(err)
	}
	scen, err := scenarios.Load(p, podEnv(t, r, c))
	if err != nil {
		t.Fatalf("the sharded scenario: %v", err)
	}
	if len(scen.Creds) < n {
		t.Errorf("the sharded scenario has %d clients for %d shards: a client would span shards", len(scen.Creds), n)
	}
	known := map[string]string{}
	for _, cl := range sim.DefaultConfig().Notify.Clients {
		known[cl.ID] = cl.Secret
	}
	for _, cr := range scen.Creds {
		if sec, ok := known[cr.ID]; !ok || sec != cr.Secret {
			t.Errorf("client %s is not a client of the simulator's default configuration", cr.ID)
		}
	}
}
