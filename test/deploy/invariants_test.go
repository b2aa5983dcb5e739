package deploy

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestInvariants checks, in every kustomization, what the deployment
// promises: restricted containers, a data plane without Kubernetes
// credentials, a private status port and consistent names and flags.
func TestInvariants(t *testing.T) {
	for _, dir := range kustomizations {
		objs := render(t, dir)
		for _, c := range invariantChecks() {
			t.Run(dir+"/"+c.name, func(t *testing.T) { c.check(t, objs) })
		}
	}
}

// invariantCheck is one check of TestInvariants, run on a set of objects.
type invariantCheck struct {
	name  string
	check func(t *testing.T, objs []*unstructured.Unstructured)
}

// invariantChecks are the checks of TestInvariants, for the kustomizations
// and the Helm chart alike.
func invariantChecks() []invariantCheck {
	return []invariantCheck{
		{"every container is restricted", checkRestricted},
		{"syncer has no Kubernetes credentials", checkSyncerNoCredentials},
		{"nginx runs in its own container", checkNginxContainer},
		{"status port is in no Service", checkStatusPortPrivate},
		{"services target declared ports", checkServiceTargets},
		{"ingress class matches the flags", checkIngressClass},
		{"watcher and syncer agree", checkFlagsAgree},
		{"namespace enforces restricted", checkNamespaceLabels},
		{"nats network policy", checkNATSNetworkPolicy},
		{"nats statefulset", checkNATSStatefulSet},
		{"secret keys", checkSecretKeys},
	}
}

func checkRestricted(t *testing.T, objs []*unstructured.Unstructured) {
	for _, w := range workloads(t, objs) {
		spec := w.Template.Spec
		psc := spec.SecurityContext
		if psc == nil || !deref(psc.RunAsNonRoot, false) || psc.SeccompProfile == nil ||
			psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s: pod securityContext needs runAsNonRoot and seccompProfile RuntimeDefault", w)
		}
		if spec.HostNetwork || spec.HostPID || spec.HostIPC {
			t.Errorf("%s: uses host namespaces", w)
		}
		for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
			checkContainer(t, w, c)
		}
	}
}

func checkContainer(t *testing.T, w workload, c corev1.Container) {
	req := c.Resources.Requests
	if req.Cpu().IsZero() || req.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("%s/%s: needs cpu and memory requests and a memory limit", w, c.Name)
	}
	sc := c.SecurityContext
	if sc == nil {
		t.Errorf("%s/%s: no securityContext", w, c.Name)
		return
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("%s/%s: allowPrivilegeEscalation must be false", w, c.Name)
	}
	if !deref(sc.ReadOnlyRootFilesystem, false) {
		t.Errorf("%s/%s: readOnlyRootFilesystem must be true", w, c.Name)
	}
	if deref(sc.Privileged, false) {
		t.Errorf("%s/%s: privileged", w, c.Name)
	}
	if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 {
		t.Errorf("%s/%s: capabilities must drop ALL and add none", w, c.Name)
	}
	for _, p := range c.Ports {
		if p.HostPort != 0 {
			t.Errorf("%s/%s: hostPort %d", w, c.Name, p.HostPort)
		}
	}
}

func checkSyncerNoCredentials(t *testing.T, objs []*unstructured.Unstructured) {
	w := workloadNamed(t, objs, syncerName)
	spec := w.Template.Spec
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Errorf("%s: automountServiceAccountToken must be false", w)
	}
	sa := typed[corev1.ServiceAccount](t, find(t, objs, "ServiceAccount", spec.ServiceAccountName))
	if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
		t.Errorf("ServiceAccount %s: automountServiceAccountToken must be false", sa.Name)
	}
	for _, v := range spec.Volumes {
		if v.Projected != nil {
			for _, src := range v.Projected.Sources {
				if src.ServiceAccountToken != nil {
					t.Errorf("%s: volume %s projects a service account token", w, v.Name)
				}
			}
		}
		if v.Secret != nil && strings.Contains(v.Secret.SecretName, "token") {
			t.Errorf("%s: volume %s mounts a token Secret", w, v.Name)
		}
	}
	for _, kind := range []string{"RoleBinding", "ClusterRoleBinding"} {
		for _, o := range ofKind(objs, kind) {
			for _, s := range typed[rbacv1.RoleBinding](t, o).Subjects {
				if s.Kind == "ServiceAccount" && s.Name == sa.Name {
					t.Errorf("%s binds the syncer's ServiceAccount", describe(o))
				}
			}
		}
	}
}

func checkStatusPortPrivate(t *testing.T, objs []*unstructured.Unstructured) {
	w := workloadNamed(t, objs, syncerName)
	status, err := strconv.Atoi(flagValue(t, container(t, w, "syncer"), "status-port"))
	if err != nil {
		t.Fatalf("--status-port: %v", err)
	}
	for _, c := range w.Template.Spec.Containers {
		for _, p := range c.Ports {
			if int(p.ContainerPort) == status {
				t.Errorf("status port %d is a containerPort (%s/%s)", status, c.Name, p.Name)
			}
		}
	}
	for _, o := range ofKind(objs, "Service") {
		for _, p := range typed[corev1.Service](t, o).Spec.Ports {
			if int(p.Port) == status || p.TargetPort.IntValue() == status {
				t.Errorf("%s exposes the status port %d", describe(o), status)
			}
		}
	}
}

// checkServiceTargets: every Service selects a workload, and each of its
// target ports is a declared port of that workload's containers.
func checkServiceTargets(t *testing.T, objs []*unstructured.Unstructured) {
	for _, o := range ofKind(objs, "Service") {
		svc := typed[corev1.Service](t, o)
		var selected []workload
		for _, w := range workloads(t, objs) {
			if labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(w.Template.Labels)) {
				selected = append(selected, w)
			}
		}
		if len(selected) != 1 {
			t.Errorf("%s selects %d workloads, want 1", describe(o), len(selected))
			continue
		}
		for _, p := range svc.Spec.Ports {
			if !declares(selected[0], p.TargetPort) {
				t.Errorf("%s: targetPort %s is not a port of %s", describe(o), p.TargetPort.String(), selected[0])
			}
		}
	}
}

func declares(w workload, port intstr.IntOrString) bool {
	for _, c := range w.Template.Spec.Containers {
		for _, p := range c.Ports {
			if (port.Type == intstr.String && p.Name == port.StrVal) ||
				(port.Type == intstr.Int && p.ContainerPort == port.IntVal) {
				return true
			}
		}
	}
	return false
}

func checkIngressClass(t *testing.T, objs []*unstructured.Unstructured) {
	classes := ofKind(objs, "IngressClass")
	if len(classes) != 1 {
		t.Fatalf("%d IngressClasses, want 1", len(classes))
	}
	ic := typed[networkingv1.IngressClass](t, classes[0])
	for _, name := range []string{watcherName, syncerName} {
		w := workloadNamed(t, objs, name)
		c := container(t, w, strings.TrimPrefix(name, "ingress-sync-"))
		if got := flagValue(t, c, "controller-class"); got != ic.Spec.Controller {
			t.Errorf("%s: --controller-class=%s, IngressClass controller %s", w, got, ic.Spec.Controller)
		}
		if got := flagValue(t, c, "ingress-class"); got != ic.Name {
			t.Errorf("%s: --ingress-class=%s, IngressClass %s", w, got, ic.Name)
		}
	}
}

func checkFlagsAgree(t *testing.T, objs []*unstructured.Unstructured) {
	watcher := container(t, workloadNamed(t, objs, watcherName), "watcher")
	syncer := container(t, workloadNamed(t, objs, syncerName), "syncer")
	for _, f := range []string{"stream", "subject-prefix", "nats-url", "controller-class", "ingress-class"} {
		if a, b := flagValue(t, watcher, f), flagValue(t, syncer, f); a != b {
			t.Errorf("--%s: watcher %q, syncer %q", f, a, b)
		}
	}
	if got := flagValue(t, watcher, "stream"); got != "INGRESS" {
		t.Errorf("--stream=%s, the NATS permissions name INGRESS", got)
	}
	if got := flagValue(t, watcher, "subject-prefix"); got != "ingress" {
		t.Errorf("--subject-prefix=%s, the NATS permissions name ingress", got)
	}
	url := flagValue(t, watcher, "nats-url")
	if !strings.HasSuffix(url, "://"+natsName+":4222") {
		t.Errorf("--nats-url=%s is not the Service %s", url, natsName)
	}
	nats := workloadNamed(t, objs, natsName)
	if got := flagValue(t, watcher, "stream-replicas"); got != strconv.Itoa(int(nats.Replicas)) {
		t.Errorf("--stream-replicas=%s with %d NATS servers", got, nats.Replicas)
	}
	lb := find(t, objs, "Service", "ingress-sync")
	if got := flagValue(t, watcher, "publish-service"); got != lb.GetNamespace()+"/"+lb.GetName() {
		t.Errorf("--publish-service=%s, Service is %s/%s", got, lb.GetNamespace(), lb.GetName())
	}
	role := typed[rbacv1.Role](t, find(t, objs, "Role", watcherName))
	id := flagValue(t, watcher, "election-id")
	if !slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.ResourceNames, id) }) {
		t.Errorf("--election-id=%s is not a lease the Role allows", id)
	}
	if got := flagValue(t, syncer, "pod-name"); got != "$(POD_NAME)" {
		t.Errorf("syncer --pod-name=%s, want $(POD_NAME)", got)
	}
}

func checkNamespaceLabels(t *testing.T, objs []*unstructured.Unstructured) {
	ns := find(t, objs, "Namespace", namespace)
	for _, mode := range []string{"enforce", "audit", "warn"} {
		if got := ns.GetLabels()["pod-security.kubernetes.io/"+mode]; got != "restricted" {
			t.Errorf("namespace label %s=%q, want restricted", mode, got)
		}
	}
	for _, o := range objs {
		if !IsClusterScoped(o.GetKind()) && o.GetNamespace() != namespace {
			t.Errorf("%s is outside %s", describe(o), namespace)
		}
	}
}

// checkNATSNetworkPolicy: 4222 only from the watcher, the syncers and the
// NATS servers; 6222 only from the NATS servers; nothing else opened.
func checkNATSNetworkPolicy(t *testing.T, objs []*unstructured.Unstructured) {
	np := typed[networkingv1.NetworkPolicy](t, find(t, objs, "NetworkPolicy", natsName))
	nats := workloadNamed(t, objs, natsName)
	if !selects(np.Spec.PodSelector.MatchLabels, nats) {
		t.Fatalf("policy does not select the NATS pods")
	}
	want := map[int32][]string{
		4222: {watcherName, syncerName, natsName},
		6222: {natsName},
	}
	got := map[int32][]string{}
	for _, rule := range np.Spec.Ingress {
		if len(rule.From) == 0 {
			t.Errorf("a rule allows every source")
		}
		for _, p := range rule.Ports {
			for _, from := range rule.From {
				if from.NamespaceSelector != nil || from.IPBlock != nil || from.PodSelector == nil {
					t.Errorf("port %s: a source outside the namespace's pods", p.Port)
					continue
				}
				got[p.Port.IntVal] = append(got[p.Port.IntVal], selected(t, objs, from.PodSelector.MatchLabels)...)
			}
		}
	}
	for port, names := range want {
		slices.Sort(names)
		g := got[port]
		slices.Sort(g)
		if !slices.Equal(g, names) {
			t.Errorf("port %d reachable from %v, want %v", port, g, names)
		}
	}
	if len(got) != len(want) {
		t.Errorf("ports opened: %v, want 4222 and 6222 only", got)
	}
}

func selects(sel map[string]string, w workload) bool {
	return len(sel) > 0 && labels.SelectorFromSet(sel).Matches(labels.Set(w.Template.Labels))
}

func selected(t *testing.T, objs []*unstructured.Unstructured, sel map[string]string) []string {
	var names []string
	for _, w := range workloads(t, objs) {
		if selects(sel, w) {
			names = append(names, w.Name)
		}
	}
	if len(names) == 0 {
		t.Errorf("selector %v matches no workload", sel)
	}
	return names
}

func checkNATSStatefulSet(t *testing.T, objs []*unstructured.Unstructured) {
	w := workloadNamed(t, objs, natsName)
	c := container(t, w, "nats")
	for name, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz?js-enabled-only=true" || p.HTTPGet.Port.StrVal != "monitor" {
			t.Errorf("%s probe must GET /healthz?js-enabled-only=true on the monitor port", name)
		}
	}
	conf := natsConfigFiles(t, objs)["nats.conf"]
	pre := c.Lifecycle.PreStop.Exec.Command
	if !slices.Equal(pre, []string{"nats-server", "--signal", "ldm=" + natsPidFile}) ||
		!strings.Contains(conf, "pid_file: "+natsPidFile+"\n") {
		t.Errorf("preStop %v must signal lame duck mode to the pid_file %s of nats.conf", pre, natsPidFile)
	}
	if !strings.HasPrefix(c.Image, "nats:2.") || !strings.HasSuffix(c.Image, "-alpine") {
		t.Errorf("image %s: want nats:2.x.y-alpine", c.Image)
	}
	if len(w.Claims) != 1 || w.Claims[0].Name != "data" {
		t.Errorf("want one volumeClaimTemplate data")
	}
	pdb := typed[policyv1.PodDisruptionBudget](t, find(t, objs, "PodDisruptionBudget", natsName))
	clustered := strings.Contains(natsConfigFiles(t, objs)["cluster.conf"], "cluster {")
	switch {
	case clustered && (w.Replicas != 3 || pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 2):
		t.Errorf("clustered: want 3 replicas and a PDB minAvailable 2")
	case !clustered && w.Replicas != 1:
		t.Errorf("without cluster routes NATS must run 1 replica, has %d", w.Replicas)
	}
	headless := typed[corev1.Service](t, find(t, objs, "Service", "nats-headless"))
	if headless.Spec.ClusterIP != corev1.ClusterIPNone || !headless.Spec.PublishNotReadyAddresses {
		t.Errorf("nats-headless must be headless and publish not-ready addresses")
	}
}

// natsPidFile is the pid file of nats.conf and of the preStop command.
const natsPidFile = "/var/run/nats/nats.pid"

// checkSecretKeys: every secretKeyRef names a key docs/deploy.md tells the
// user to create.
func checkSecretKeys(t *testing.T, objs []*unstructured.Unstructured) {
	keys := map[string]bool{authSecretName + "/watcher-password": true, authSecretName + "/syncer-password": true,
		"nats-encryption/key": true}
	for _, w := range workloads(t, objs) {
		for _, c := range w.Template.Spec.Containers {
			for _, e := range c.Env {
				if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
					continue
				}
				ref := e.ValueFrom.SecretKeyRef
				if !keys[ref.Name+"/"+ref.Key] {
					t.Errorf("%s/%s: env %s from secret %s key %s", w, c.Name, e.Name, ref.Name, ref.Key)
				}
			}
		}
	}
}

// natsConfigFiles returns the files of the NATS ConfigMap.
func natsConfigFiles(t testing.TB, objs []*unstructured.Unstructured) map[string]string {
	t.Helper()
	return typed[corev1.ConfigMap](t, find(t, objs, "ConfigMap", natsConfigName)).Data
}
