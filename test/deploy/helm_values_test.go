package deploy

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestHelmIngressNginxValues: the values an ingress-nginx user writes
// (testdata/helm/ingress-nginx.yaml) reach the objects they mean there.
func TestHelmIngressNginxValues(t *testing.T) {
	objs := renderChart(t, "ingress-nginx")
	watcher := container(t, workloadNamed(t, objs, watcherName), "watcher")
	syncer := container(t, workloadNamed(t, objs, syncerName), "syncer")
	for _, c := range []corev1.Container{watcher, syncer} {
		if got := flagValue(t, c, "default-ssl-certificate"); got != "ingress-sync/default-tls" {
			t.Errorf("%s: --default-ssl-certificate=%s", c.Name, got)
		}
		if got := flagValue(t, c, "configmap"); got != namespace+"/ingress-sync-controller" {
			t.Errorf("%s: --configmap=%s", c.Name, got)
		}
	}
	if !slices.Contains(syncer.Args, "--enable-ssl-passthrough") || slices.Contains(watcher.Args, "--enable-ssl-passthrough") {
		t.Errorf("--enable-ssl-passthrough must reach the syncer only: watcher %v, syncer %v", watcher.Args, syncer.Args)
	}
	if got := flagValue(t, watcher, "election-id"); got != "ingress-sync-leader" {
		t.Errorf("controller.electionID: --election-id=%s", got)
	}
	if got := flagValue(t, syncer, "default-backend-service"); got != namespace+"/ingress-sync-defaultbackend" {
		t.Errorf("defaultBackend.enabled: --default-backend-service=%s", got)
	}
	find(t, objs, "Service", "ingress-sync-defaultbackend")
	checkControllerConfig(t, objs)
	checkL4Services(t, objs)
	checkSyncerScaling(t, objs)
	checkMonitoring(t, objs)
}

// checkControllerConfig: controller.config, addHeaders and proxySetHeaders
// become the controller ConfigMap and the two header ConfigMaps it names.
func checkControllerConfig(t *testing.T, objs []*unstructured.Unstructured) {
	cm := typed[corev1.ConfigMap](t, find(t, objs, "ConfigMap", "ingress-sync-controller")).Data
	for k, v := range map[string]string{
		"use-forwarded-headers": "true", "proxy-body-size": "16m", "hsts": "false",
		"add-headers":       namespace + "/ingress-sync-custom-add-headers",
		"proxy-set-headers": namespace + "/ingress-sync-custom-proxy-headers",
	} {
		if cm[k] != v {
			t.Errorf("controller ConfigMap %s=%q, want %q", k, cm[k], v)
		}
	}
	add := typed[corev1.ConfigMap](t, find(t, objs, "ConfigMap", "ingress-sync-custom-add-headers")).Data
	set := typed[corev1.ConfigMap](t, find(t, objs, "ConfigMap", "ingress-sync-custom-proxy-headers")).Data
	if add["X-Frame-Options"] != "DENY" || set["X-Served-By"] != "ingress-sync" {
		t.Errorf("header ConfigMaps: add %v, proxy-set %v", add, set)
	}
}

// checkL4Services: tcp and udp fill the services ConfigMaps, and each port
// is on the Service, the syncer pods and their NetworkPolicy; a port below
// 1024 opens unprivileged low ports in the syncer pods.
func checkL4Services(t *testing.T, objs []*unstructured.Unstructured) {
	tcp := typed[corev1.ConfigMap](t, find(t, objs, "ConfigMap", "tcp-services")).Data
	udp := typed[corev1.ConfigMap](t, find(t, objs, "ConfigMap", "udp-services")).Data
	if tcp["5432"] != "databases/postgres:5432" || tcp["22"] != "git/gitlab-shell:22" || udp["5353"] != "kube-system/dns:53" {
		t.Errorf("services ConfigMaps: tcp %v, udp %v", tcp, udp)
	}
	svc := typed[corev1.Service](t, find(t, objs, "Service", "ingress-sync"))
	np := typed[networkingv1.NetworkPolicy](t, find(t, objs, "NetworkPolicy", syncerName))
	for port, proto := range map[int32]corev1.Protocol{5432: "TCP", 22: "TCP", 5353: "UDP"} {
		if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == port && p.Protocol == proto }) {
			t.Errorf("Service ingress-sync has no %s port %d", proto, port)
		}
		if !admits(np, port, proto) {
			t.Errorf("NetworkPolicy %s does not admit %s %d", syncerName, proto, port)
		}
	}
	sysctls := workloadNamed(t, objs, syncerName).Template.Spec.SecurityContext.Sysctls
	if !slices.Equal(sysctls, []corev1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: "22"}}) {
		t.Errorf("syncer sysctls %v, want ip_unprivileged_port_start 22 for tcp port 22", sysctls)
	}
}

// admits reports whether a rule of np opens port with protocol proto.
func admits(np *networkingv1.NetworkPolicy, port int32, proto corev1.Protocol) bool {
	for _, rule := range np.Spec.Ingress {
		for _, p := range rule.Ports {
			if p.Port != nil && p.Port.IntVal == port && p.Protocol != nil && *p.Protocol == proto {
				return true
			}
		}
	}
	return false
}

// checkSyncerScaling: controller.autoscaling makes an HPA and leaves the
// Deployment's replicas to it; controller.minAvailable sets the PDB.
func checkSyncerScaling(t *testing.T, objs []*unstructured.Unstructured) {
	hpa := typed[autoscalingv2.HorizontalPodAutoscaler](t, find(t, objs, "HorizontalPodAutoscaler", syncerName))
	if hpa.Spec.ScaleTargetRef.Name != syncerName || deref(hpa.Spec.MinReplicas, 0) != 3 || hpa.Spec.MaxReplicas != 10 {
		t.Errorf("HPA %+v", hpa.Spec)
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(find(t, objs, "Deployment", syncerName).Object, "spec", "replicas"); ok {
		t.Errorf("with autoscaling the Deployment must leave replicas to the HPA")
	}
	pdb := typed[policyv1.PodDisruptionBudget](t, find(t, objs, "PodDisruptionBudget", syncerName))
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 2 || pdb.Spec.MaxUnavailable != nil {
		t.Errorf("controller.minAvailable 2: PDB %+v", pdb.Spec)
	}
}

// checkMonitoring: the metrics Services, the ServiceMonitor selecting them,
// deploy/monitoring's alerts plus the user's group, and the dashboard.
func checkMonitoring(t *testing.T, objs []*unstructured.Unstructured) {
	for _, name := range []string{"ingress-sync-syncer-metrics", "ingress-sync-watcher-metrics"} {
		svc := find(t, objs, "Service", name)
		if svc.GetLabels()["ingress-sync.io/metrics"] != "true" {
			t.Errorf("%s lacks the label the ServiceMonitor selects", name)
		}
	}
	sm := find(t, objs, "ServiceMonitor", "ingress-sync")
	if sm.GetLabels()["release"] != "kube-prometheus-stack" {
		t.Errorf("ServiceMonitor labels %v lack additionalLabels", sm.GetLabels())
	}
	rule := find(t, objs, "PrometheusRule", "ingress-sync")
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	want := monitoringRuleGroups(t)
	if len(groups) != len(want)+1 || !reflect.DeepEqual(groups[:len(want)], want) {
		t.Errorf("PrometheusRule groups: want deploy/monitoring's %d and one of controller.metrics.prometheusRule.rules, got %d",
			len(want), len(groups))
	}
	dash := typed[corev1.ConfigMap](t, find(t, objs, "ConfigMap", "ingress-sync-dashboard"))
	file, err := os.ReadFile(filepath.Join(deployDir, "monitoring", "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	if dash.Labels["grafana_dashboard"] != "1" || dash.Data["ingress-sync.json"] != strings.TrimRight(string(file), "\n") {
		t.Errorf("dashboard ConfigMap: labels %v, data is not deploy/monitoring/dashboard.json", dash.Labels)
	}
}

// monitoringRuleGroups are the groups of deploy/monitoring/prometheusrule.yaml.
func monitoringRuleGroups(t *testing.T) []any {
	objs, err := ReadObjects(filepath.Join(deployDir, "monitoring", "prometheusrule.yaml"))
	if err != nil || len(objs) != 1 {
		t.Fatalf("deploy/monitoring/prometheusrule.yaml: %v", err)
	}
	groups, _, _ := unstructured.NestedSlice(objs[0].Object, "spec", "groups")
	return groups
}

// TestHelmMonitoringFiles: the chart's copies of the alerts and the
// dashboard are deploy/monitoring's files, byte for byte (a chart reads no
// file outside its folder).
func TestHelmMonitoringFiles(t *testing.T) {
	for _, name := range []string{"prometheusrule.yaml", "dashboard.json"} {
		a, errA := os.ReadFile(filepath.Join(deployDir, "monitoring", name))
		b, errB := os.ReadFile(filepath.Join(chartDir, "files", name))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("deploy/helm/ingress-sync/files/%s differs from deploy/monitoring/%s (%v, %v): copy it", name, name, errA, errB)
		}
	}
}

// TestHelmExternalNATS: with nats.external the chart runs no NATS, and the
// clients connect to the given URL with credentials files, trusting the
// given CA, and no password.
func TestHelmExternalNATS(t *testing.T) {
	objs := renderChart(t, "external-nats")
	for _, o := range objs {
		if o.GetLabels()["app.kubernetes.io/name"] == "nats" {
			t.Errorf("external NATS, yet the chart renders %s", describe(o))
		}
	}
	for name, secret := range map[string]string{watcherName: "ingress-sync-watcher-nats", syncerName: "ingress-sync-syncer-nats"} {
		w := workloadNamed(t, objs, name)
		c := container(t, w, strings.TrimPrefix(name, "ingress-sync-"))
		if flagValue(t, c, "nats-url") != "tls://nats.messaging.svc:4222" || flagValue(t, c, "nats-creds") != "/etc/nats-creds/creds" {
			t.Errorf("%s: args %v", name, c.Args)
		}
		if envValue(t, c, "SSL_CERT_FILE") != "/etc/nats-ca/ca.crt" || slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "NATS_PASSWORD" }) {
			t.Errorf("%s: env %v", name, c.Env)
		}
		vols := map[string]string{}
		for _, v := range w.Template.Spec.Volumes {
			if v.Secret != nil {
				vols[v.Name] = v.Secret.SecretName
			}
		}
		if vols["nats-creds"] != secret || vols["nats-ca"] != "messaging-ca" {
			t.Errorf("%s: secret volumes %v", name, vols)
		}
	}
	if got := flagValue(t, container(t, workloadNamed(t, objs, watcherName), "watcher"), "stream-replicas"); got != "3" {
		t.Errorf("--stream-replicas=%s, want stream.replicas 3", got)
	}
}
