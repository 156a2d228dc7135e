package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/msgload/msgload/scenarios"
)

// graceMargin is how much longer than the scenario's delivery grace a shard
// pod is given after SIGTERM before the kubelet kills it: the grace wait
// itself, then the reports written after it.
const graceMargin = 30 * time.Second

// bytesPerMessage is what one planned message takes in a shard's raw files
// with delivery none (measured: attempts.jsonl and results.bin); the sink
// logs take about as much again with delivery via sink, and the merge writes
// a second copy of the shards' files.
const bytesPerMessage = 515

// positional returns the arguments of args that are neither flags nor the
// values of flags (every flag here takes a value).
func positional(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if strings.HasPrefix(args[i], "--") {
			if !strings.Contains(args[i], "=") {
				i++
			}
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// podEnv is the environment container c sees of its Secrets (literal values
// and secretKeyRef to a rendered Secret): what the scenario expands.
func podEnv(t *testing.T, r rendered, c corev1.Container) func(string) string {
	t.Helper()
	return func(name string) string {
		e := envOf(c, name)
		switch {
		case e == nil:
			return ""
		case e.ValueFrom == nil:
			return e.Value
		case e.ValueFrom.SecretKeyRef != nil:
			s := r.secrets[e.ValueFrom.SecretKeyRef.Name]
			if s == nil {
				t.Errorf("%s: env %s refers to Secret %s, which is not rendered", c.Name, name, e.ValueFrom.SecretKeyRef.Name)
				return ""
			}
			return string(s.Data[e.ValueFrom.SecretKeyRef.Key])
		}
		return ""
	}
}

func shardJob(t *testing.T, r rendered) *batchv1.Job {
	t.Helper()
	job, ok := r.jobs["msgload-shard"]
	if !ok || job.Spec.Completions == nil {
		t.Fatal("no Job msgload-shard with completions")
	}
	return job
}

// shardScenario loads the scenario the shards run from its ConfigMap, its
// secrets expanded from the shard container's environment.
func shardScenario(t *testing.T, r rendered, c corev1.Container) *scenarios.Scenario {
	t.Helper()
	sc, ok := r.configMaps["msgload-sharded-scenario"]
	if !ok {
		t.Fatal("no ConfigMap msgload-sharded-scenario")
	}
	p := filepath.Join(t.TempDir(), "scenario.yaml")
	if err := os.WriteFile(p, []byte(sc.Data["scenario.yaml"]), 0o644); err != nil {
		t.Fatal(err)
	}
	scen, err := scenarios.Load(p, podEnv(t, r, c))
	if err != nil {
		t.Fatalf("the sharded scenario: %v", err)
	}
	return scen
}

// TestK8sShardFailurePolicy: one failed shard must not fail the Job and kill
// the others (per-index backoff, every index allowed to fail), and the pod
// failure policy tells the ends apart: bad input fails the Job, a verdict or
// an interrupted shard fails its index only (never retried: its messages went
// out), a disruption is ignored.
func TestK8sShardFailurePolicy(t *testing.T) {
	job := shardJob(t, kustomize(t, "k8s-sharded"))
	s := job.Spec
	n := *s.Completions
	if s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex != 0 {
		t.Errorf("backoffLimitPerIndex %v, want 0: a failed index fails alone and a shard is never run twice", s.BackoffLimitPerIndex)
	}
	if s.MaxFailedIndexes == nil || *s.MaxFailedIndexes != n {
		t.Errorf("maxFailedIndexes %v, want %d (the completions): no failed shard stops the others", s.MaxFailedIndexes, n)
	}
	if s.BackoffLimit != nil && s.BackoffLimitPerIndex == nil && *s.BackoffLimit == 0 {
		t.Error("backoffLimit 0 without per-index backoff: one failed shard fails the Job and kills the others")
	}
	if s.PodFailurePolicy == nil {
		t.Fatal("no podFailurePolicy: an OOM kill, a disruption and a failed verdict are all the same failure")
	}
	if s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %s, want Never (a pod failure policy needs it)", s.Template.Spec.RestartPolicy)
	}
	container := s.Template.Spec.Containers[0].Name
	// actionFor is what the policy does with a pod whose container ended
	// with code, or that has condition cond: the first matching rule.
	actionFor := func(code int32, cond corev1.PodConditionType) batchv1.PodFailurePolicyAction {
		for _, rule := range s.PodFailurePolicy.Rules {
			if e := rule.OnExitCodes; e != nil && code != 0 {
				if e.ContainerName != nil && *e.ContainerName != container {
					continue
				}
				in := slices.Contains(e.Values, code)
				if (e.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn) == in {
					return rule.Action
				}
			}
			for _, p := range rule.OnPodConditions {
				if cond != "" && p.Type == cond && p.Status == corev1.ConditionTrue {
					return rule.Action
				}
			}
		}
		return "" // counted against backoffLimitPerIndex
	}
	for _, c := range []struct {
		what string
		code int32
		cond corev1.PodConditionType
		want batchv1.PodFailurePolicyAction
	}{
		{"exit 1 (verdict fail or error: the result, not a crash)", 1, "", batchv1.PodFailurePolicyActionFailIndex},
		{"exit 2 (bad input: every shard would fail alike)", 2, "", batchv1.PodFailurePolicyActionFailJob},
		{"exit 3 (incomplete: the plan not held, or its directory already exists)", 3, "", batchv1.PodFailurePolicyActionFailIndex},
		{"exit 130 (interrupted: what it flushed merges as incomplete)", 130, "", batchv1.PodFailurePolicyActionFailIndex},
		{"a disruption (eviction, preemption)", 0, corev1.DisruptionTarget, batchv1.PodFailurePolicyActionIgnore},
		{"exit 137 (OOM kill: counted, the index fails)", 137, "", ""},
	} {
		if got := actionFor(c.code, c.cond); got != c.want {
			t.Errorf("%s: action %q, want %q", c.what, got, c.want)
		}
	}
}

// TestK8sShardGraceDerived: a SIGTERM'd shard still waits the scenario's
// delivery grace and writes its reports; the kubelet must not kill it first.
func TestK8sShardGraceDerived(t *testing.T) {
	r := kustomize(t, "k8s-sharded")
	job := shardJob(t, r)
	pod := job.Spec.Template.Spec
	scen := shardScenario(t, r, pod.Containers[0])
	grace := scen.Delivery.Grace.D
	if grace <= 0 {
		t.Fatalf("the sharded scenario has no delivery grace (%v): the test would check nothing", grace)
	}
	want := int64((grace + graceMargin) / time.Second)
	if pod.TerminationGracePeriodSeconds == nil || *pod.TerminationGracePeriodSeconds < want {
		t.Errorf("terminationGracePeriodSeconds %v, want ≥ %d (delivery.grace %v + %v)", pod.TerminationGracePeriodSeconds, want, grace, graceMargin)
	}
}

// TestK8sMergeGated: the merge Job waits for all N shards (with a deadline)
// in the run's directory instead of a hard-coded list, and is given the
// memory it needs to build the whole report.
func TestK8sMergeGated(t *testing.T) {
	r := kustomize(t, "k8s-sharded")
	m := kustomize(t, "k8s-sharded/merge")
	n := int(*shardJob(t, r).Spec.Completions)
	mj, ok := m.jobs["msgload-merge"]
	if !ok {
		t.Fatal("no Job msgload-merge")
	}
	mc := mj.Spec.Template.Spec.Containers[0]
	if got := flagValue(mc.Args, "wait-for"); got != strconv.Itoa(n) {
		t.Errorf("msgload-merge: --wait-for %q, want %d: it does not wait for the shards", got, n)
	}
	if d, err := time.ParseDuration(flagValue(mc.Args, "wait-timeout")); err != nil || d <= 0 {
		t.Errorf("msgload-merge: --wait-timeout %q: want a deadline (%v)", flagValue(mc.Args, "wait-timeout"), err)
	}
	if dirs := positional(mc.Args[1:]); len(dirs) != 0 {
		t.Errorf("msgload-merge lists shard directories %v, want them derived from the run's directory", dirs)
	}
	res := mc.Resources
	if res.Requests.Memory().IsZero() || res.Limits.Memory().IsZero() || res.Requests.Cpu().IsZero() {
		t.Errorf("msgload-merge: resources %+v, want cpu and memory requests and a memory limit", res)
	}
}

// TestK8sShardBarrier: the shards start together on a barrier in the run's
// directory on the shared volume, bounded by a deadline.
func TestK8sShardBarrier(t *testing.T) {
	c := shardJob(t, kustomize(t, "k8s-sharded")).Spec.Template.Spec.Containers[0]
	out := flagValue(c.Args, "out")
	if b := flagValue(c.Args, "barrier"); !strings.HasPrefix(b, out+"/$(MSGLOAD_RUN_RUN_ID)/") {
		t.Errorf("msgload-shard: --barrier %q, want a directory of the run under %s/$(MSGLOAD_RUN_RUN_ID)/", b, out)
	}
	if d, err := time.ParseDuration(flagValue(c.Args, "barrier-timeout")); err != nil || d <= 0 {
		t.Errorf("msgload-shard: --barrier-timeout %q: want a deadline", flagValue(c.Args, "barrier-timeout"))
	}
}

// restrictedViolations checks a pod against the restricted level of the
// Kubernetes Pod Security Standards (baseline included), as written there:
// host namespaces, privileged, capabilities, hostPath and volume types, host
// ports, runAsNonRoot, runAsUser 0, allowPrivilegeEscalation, seccomp,
// procMount, AppArmor, SELinux, sysctls.
func restrictedViolations(spec corev1.PodSpec) []string {
	var bad []string
	add := func(f string, a ...any) { bad = append(bad, fmt.Sprintf(f, a...)) }
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		add("host namespaces (hostNetwork %v, hostPID %v, hostIPC %v)", spec.HostNetwork, spec.HostPID, spec.HostIPC)
	}
	allowed := func(v corev1.Volume) bool {
		return v.ConfigMap != nil || v.CSI != nil || v.DownwardAPI != nil || v.EmptyDir != nil ||
			v.Ephemeral != nil || v.PersistentVolumeClaim != nil || v.Projected != nil || v.Secret != nil
	}
	for _, v := range spec.Volumes {
		if v.HostPath != nil || !allowed(v) {
			add("volume %s is of a type the restricted level forbids", v.Name)
		}
	}
	psc := spec.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	safeSysctls := []string{"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
		"net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
		"net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"}
	for _, s := range psc.Sysctls {
		if !slices.Contains(safeSysctls, s.Name) {
			add("sysctl %s is not in the safe set", s.Name)
		}
	}
	if psc.RunAsUser != nil && *psc.RunAsUser == 0 {
		add("pod runAsUser 0")
	}
	seccompOK := func(p *corev1.SeccompProfile) bool {
		return p != nil && (p.Type == corev1.SeccompProfileTypeRuntimeDefault || p.Type == corev1.SeccompProfileTypeLocalhost)
	}
	appArmorOK := func(p *corev1.AppArmorProfile) bool {
		return p == nil || p.Type == corev1.AppArmorProfileTypeRuntimeDefault || p.Type == corev1.AppArmorProfileTypeLocalhost
	}
	seLinuxOK := func(o *corev1.SELinuxOptions) bool {
		return o == nil || (o.User == "" && o.Role == "" && slices.Contains([]string{"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}, o.Type))
	}
	if !appArmorOK(psc.AppArmorProfile) || !seLinuxOK(psc.SELinuxOptions) {
		add("pod AppArmor or SELinux options the restricted level forbids")
	}
	if psc.SeccompProfile != nil && !seccompOK(psc.SeccompProfile) {
		add("pod seccompProfile %s", psc.SeccompProfile.Type)
	}
	containers := append(slices.Clone(spec.InitContainers), spec.Containers...)
	for _, c := range containers {
		sc := c.SecurityContext
		if sc == nil {
			sc = &corev1.SecurityContext{}
		}
		if sc.Privileged != nil && *sc.Privileged {
			add("%s: privileged", c.Name)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			add("%s: allowPrivilegeEscalation is not false", c.Name)
		}
		if (sc.RunAsNonRoot == nil && (psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot)) || (sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot) {
			add("%s: runAsNonRoot is not true", c.Name)
		}
		if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			add("%s: runAsUser 0", c.Name)
		}
		if !seccompOK(sc.SeccompProfile) && (sc.SeccompProfile != nil || !seccompOK(psc.SeccompProfile)) {
			add("%s: seccompProfile is not RuntimeDefault or Localhost", c.Name)
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
			add("%s: capabilities do not drop ALL", c.Name)
		} else {
			for _, a := range sc.Capabilities.Add {
				if a != "NET_BIND_SERVICE" {
					add("%s: adds capability %s", c.Name, a)
				}
			}
		}
		if sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount {
			add("%s: procMount %s", c.Name, *sc.ProcMount)
		}
		if !appArmorOK(sc.AppArmorProfile) || !seLinuxOK(sc.SELinuxOptions) {
			add("%s: AppArmor or SELinux options the restricted level forbids", c.Name)
		}
		for _, p := range c.Ports {
			if p.HostPort != 0 {
				add("%s: hostPort %d", c.Name, p.HostPort)
			}
		}
	}
	return bad
}

// TestRestrictedViolations: the checker itself finds what the restricted
// level forbids (a checker that passes everything would pass the manifests).
func TestRestrictedViolations(t *testing.T) {
	no, yes := false, true
	good := corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		Containers: []corev1.Container{{Name: "c", SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}},
		Volumes: []corev1.Volume{{Name: "d", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
	}
	if v := restrictedViolations(good); len(v) != 0 {
		t.Fatalf("a restricted pod: %v", v)
	}
	for name, spoil := range map[string]func(*corev1.PodSpec){
		"hostNetwork": func(p *corev1.PodSpec) { p.HostNetwork = true },
		"hostPath": func(p *corev1.PodSpec) {
			p.Volumes[0].VolumeSource = corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}
		},
		"root":       func(p *corev1.PodSpec) { p.SecurityContext.RunAsNonRoot = nil },
		"no seccomp": func(p *corev1.PodSpec) { p.SecurityContext.SeccompProfile = nil },
		"escalation": func(p *corev1.PodSpec) { p.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil },
		"capabilities": func(p *corev1.PodSpec) {
			p.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"NET_ADMIN"}
		},
		"privileged":    func(p *corev1.PodSpec) { p.Containers[0].SecurityContext.Privileged = &yes },
		"hostPort":      func(p *corev1.PodSpec) { p.Containers[0].Ports = []corev1.ContainerPort{{HostPort: 80}} },
		"drop not ALL":  func(p *corev1.PodSpec) { p.Containers[0].SecurityContext.Capabilities.Drop = nil },
		"unconfined":    func(p *corev1.PodSpec) { p.SecurityContext.SeccompProfile.Type = corev1.SeccompProfileTypeUnconfined },
		"runAsUser 0":   func(p *corev1.PodSpec) { zero := int64(0); p.SecurityContext.RunAsUser = &zero },
		"unsafe sysctl": func(p *corev1.PodSpec) { p.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "kernel.msgmax"}} },
	} {
		p := *good.DeepCopy()
		spoil(&p)
		if len(restrictedViolations(p)) == 0 {
			t.Errorf("%s: no violation found", name)
		}
	}
}

// TestK8sPodSecurity: every pod of every kustomization passes the restricted
// Pod Security level, and msgload's own run with a read-only root file system.
func TestK8sPodSecurity(t *testing.T) {
	for _, dir := range kustomizations {
		r := kustomize(t, dir)
		pods := map[string]corev1.PodSpec{}
		for name, j := range r.jobs {
			pods["Job "+name] = j.Spec.Template.Spec
		}
		for name, d := range r.deployments {
			pods["Deployment "+name] = d.Spec.Template.Spec
		}
		for name, spec := range pods {
			for _, v := range restrictedViolations(spec) {
				t.Errorf("%s: %s: %s", dir, name, v)
			}
			for _, c := range spec.Containers {
				if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
					t.Errorf("%s: %s: container %s: the root file system is writable", dir, name, c.Name)
				}
			}
		}
	}
}

// TestK8sShardPlacementSecretsStorage: shards spread across nodes, the
// clients' secrets come from a Secret (none written in a ConfigMap), and the
// shared volume holds what the scenario's plan writes.
func TestK8sShardPlacementSecretsStorage(t *testing.T) {
	r := kustomize(t, "k8s-sharded")
	job := shardJob(t, r)
	pod := job.Spec.Template.Spec
	spread := false
	for _, c := range pod.TopologySpreadConstraints {
		if c.TopologyKey == "kubernetes.io/hostname" && c.LabelSelector != nil && c.LabelSelector.MatchLabels["app"] == job.Spec.Template.Labels["app"] {
			spread = true
		}
	}
	if !spread {
		t.Error("msgload-shard: no topologySpreadConstraints on kubernetes.io/hostname selecting the shard pods")
	}

	scen := shardScenario(t, r, pod.Containers[0])
	raw := r.configMaps["msgload-sharded-scenario"].Data["scenario.yaml"]
	for _, cr := range scen.Creds {
		if cr.Secret == "" {
			t.Errorf("client %s has no secret", cr.ID)
		} else if strings.Contains(raw, "clientSecret: "+cr.Secret) {
			t.Errorf("client %s: its secret is written in the ConfigMap, not taken from a Secret", cr.ID)
		}
	}

	claim, ok := r.claims["msgload-data"]
	if !ok {
		t.Fatal("no PersistentVolumeClaim msgload-data")
	}
	messages := int64(scen.Load.Rate.PerSecond() * scen.Load.Duration.D.Seconds())
	if messages <= 0 {
		t.Fatalf("the scenario plans %d messages: the test would check nothing", messages)
	}
	need := messages * bytesPerMessage * 3 // shards, sink logs, the merge's copy
	got := claim.Spec.Resources.Requests.Storage()
	if got.Value() < need {
		t.Errorf("msgload-data: %s for %d planned messages, want ≥ %d bytes (515 B × 3 a message)", got, messages, need)
	}
}
