package deploy

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The two containers of a syncer pod, and the command of each.
var (
	syncerCommand = []string{"/usr/local/bin/syncer", "run"}
	nginxCommand  = []string{"/usr/local/bin/syncer", "nginx"}
)

// nginxSharedFlags are the flags the nginx container (`syncer nginx`) and
// the syncer container (`syncer run`) both take; they must agree.
var nginxSharedFlags = []string{"nginx-binary", "nginx-dir", "status-port", "worker-shutdown-timeout"}

// keeperKillDelay is how long after --worker-shutdown-timeout the keeper
// kills nginx.
const keeperKillDelay = 2 * time.Second

// checkNginxContainer: nginx runs in a container of its own beside the
// syncer's (issue 17: a crashed syncer must not take nginx down), which the
// syncer can follow and signal: a shared process namespace, the same user,
// the same nginx dir and flags, and --nginx-mode=external.
func checkNginxContainer(t *testing.T, objs []*unstructured.Unstructured) {
	w := workloadNamed(t, objs, syncerName)
	spec := w.Template.Spec
	if !deref(spec.ShareProcessNamespace, false) {
		t.Errorf("%s: shareProcessNamespace must be true: the syncer signals nginx and reads /proc", w)
	}
	if names := containerNames(spec.Containers); !slices.Equal(names, []string{"syncer", "nginx"}) {
		t.Errorf("%s: containers %v, want [syncer nginx]", w, names)
	}
	syncer, nginx := container(t, w, "syncer"), container(t, w, "nginx")
	if !slices.Equal(syncer.Command, syncerCommand) || !slices.Equal(nginx.Command, nginxCommand) {
		t.Errorf("%s: commands syncer %v, nginx %v; want %v and %v", w, syncer.Command, nginx.Command, syncerCommand, nginxCommand)
	}
	if got := flagValue(t, syncer, "nginx-mode"); got != "external" {
		t.Errorf("%s/syncer: --nginx-mode=%s, want external (nginx is the nginx container's)", w, got)
	}
	for _, f := range nginxSharedFlags {
		if a, b := flagValue(t, syncer, f), flagValue(t, nginx, f); a != b {
			t.Errorf("%s: --%s: syncer %q, nginx %q", w, f, a, b)
		}
	}
	dir := flagValue(t, nginx, "nginx-dir")
	for _, c := range []corev1.Container{syncer, nginx} {
		if !mountsEmptyDirAt(spec, c, dir) {
			t.Errorf("%s/%s: does not mount an emptyDir shared by both containers at --nginx-dir %s", w, c.Name, dir)
		}
	}
	checkSameUser(t, w, syncer, nginx)
	checkNginxNoCredentials(t, w, nginx)
	checkServingPorts(t, w, syncer, nginx)
	checkStopTimings(t, w, syncer, nginx)
}

func containerNames(cs []corev1.Container) []string {
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	return names
}

// mountsEmptyDirAt reports whether c mounts, at path, an emptyDir volume
// that every container of the pod mounts at the same path.
func mountsEmptyDirAt(spec corev1.PodSpec, c corev1.Container, path string) bool {
	i := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == path })
	if i < 0 || c.VolumeMounts[i].ReadOnly || c.VolumeMounts[i].SubPath != "" {
		return false
	}
	name := c.VolumeMounts[i].Name
	v := slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == name })
	if v < 0 || spec.Volumes[v].EmptyDir == nil {
		return false
	}
	for _, other := range spec.Containers {
		if !slices.ContainsFunc(other.VolumeMounts, func(m corev1.VolumeMount) bool {
			return m.Name == name && m.MountPath == path && m.SubPath == ""
		}) {
			return false
		}
	}
	return true
}

// checkSameUser: both containers run as the pod's user and group (a
// container may not override them), so that the syncer can signal nginx
// and read its /proc entries without a capability.
func checkSameUser(t *testing.T, w workload, cs ...corev1.Container) {
	psc := w.Template.Spec.SecurityContext
	if psc == nil || psc.RunAsUser == nil || psc.RunAsGroup == nil {
		t.Errorf("%s: the pod securityContext must set runAsUser and runAsGroup for both containers", w)
		return
	}
	for _, c := range cs {
		if sc := c.SecurityContext; sc != nil && (sc.RunAsUser != nil && *sc.RunAsUser != *psc.RunAsUser ||
			sc.RunAsGroup != nil && *sc.RunAsGroup != *psc.RunAsGroup) {
			t.Errorf("%s/%s: runs as another user or group than the pod's %d:%d", w, c.Name, *psc.RunAsUser, *psc.RunAsGroup)
		}
	}
}

// checkNginxNoCredentials: the nginx container, which faces the traffic,
// gets no NATS setting or secret and no service account token.
func checkNginxNoCredentials(t *testing.T, w workload, nginx corev1.Container) {
	if len(nginx.EnvFrom) != 0 {
		t.Errorf("%s/nginx: envFrom %v", w, nginx.EnvFrom)
	}
	for _, e := range nginx.Env {
		if strings.HasPrefix(e.Name, "NATS_") || e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			t.Errorf("%s/nginx: env %s: the nginx container has no NATS settings or secrets", w, e.Name)
		}
	}
	for _, f := range argFlags(t, nginx) {
		if strings.HasPrefix(f, "nats-") {
			t.Errorf("%s/nginx: passes --%s", w, f)
		}
	}
	for _, m := range nginx.VolumeMounts {
		i := slices.IndexFunc(w.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		if i < 0 {
			t.Errorf("%s/nginx: mounts the unknown volume %s", w, m.Name)
			continue
		}
		if v := w.Template.Spec.Volumes[i]; v.EmptyDir == nil {
			t.Errorf("%s/nginx: mounts %s, which is not an emptyDir (secrets and tokens stay in the syncer container)", w, m.Name)
		}
		if strings.HasPrefix(m.MountPath, "/var/run/secrets") {
			t.Errorf("%s/nginx: mounts %s at %s", w, m.Name, m.MountPath)
		}
	}
}

// checkServingPorts: the traffic ports are the nginx container's, the
// metrics port and the probes the syncer container's.
func checkServingPorts(t *testing.T, w workload, syncer, nginx corev1.Container) {
	for _, p := range []string{"http", "https"} {
		if !slices.ContainsFunc(nginx.Ports, func(cp corev1.ContainerPort) bool { return cp.Name == p }) {
			t.Errorf("%s/nginx: no port %s", w, p)
		}
	}
	if !slices.ContainsFunc(syncer.Ports, func(cp corev1.ContainerPort) bool { return cp.Name == "metrics" }) {
		t.Errorf("%s/syncer: no port metrics", w)
	}
	if syncer.ReadinessProbe == nil || syncer.LivenessProbe == nil || syncer.StartupProbe == nil {
		t.Errorf("%s/syncer: needs the readiness, liveness and startup probes", w)
	}
	if nginx.LivenessProbe != nil {
		t.Errorf("%s/nginx: a liveness probe would restart nginx with its container; the keeper restarts nginx itself", w)
	}
}

// checkStopTimings: both containers pause as long before SIGTERM, and the
// grace period covers the pause, the drain and the keeper's kill delay.
func checkStopTimings(t *testing.T, w workload, syncer, nginx corev1.Container) {
	pause := preStopSleep(t, w, nginx)
	if got := preStopSleep(t, w, syncer); got != pause {
		t.Errorf("%s: preStop pauses syncer %s, nginx %s: the syncer must keep nginx current while it serves", w, got, pause)
	}
	drain, err := time.ParseDuration(flagValue(t, nginx, "worker-shutdown-timeout"))
	if err != nil {
		t.Fatalf("%s/nginx: --worker-shutdown-timeout: %v", w, err)
	}
	grace := time.Duration(deref(w.Template.Spec.TerminationGracePeriodSeconds, 30)) * time.Second
	if need := pause + drain + keeperKillDelay; grace <= need {
		t.Errorf("%s: terminationGracePeriodSeconds %s, want more than preStop %s + drain %s + %s", w, grace, pause, drain, keeperKillDelay)
	}
}

// preStopSleep is the pause of c's preStop command /bin/sleep N.
func preStopSleep(t *testing.T, w workload, c corev1.Container) time.Duration {
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Exec == nil {
		t.Fatalf("%s/%s: no preStop command", w, c.Name)
	}
	cmd := c.Lifecycle.PreStop.Exec.Command
	if len(cmd) != 2 || cmd[0] != "/bin/sleep" {
		t.Fatalf("%s/%s: preStop %v, want /bin/sleep N", w, c.Name, cmd)
	}
	n, err := strconv.Atoi(cmd[1])
	if err != nil {
		t.Fatalf("%s/%s: preStop %v: %v", w, c.Name, cmd, err)
	}
	return time.Duration(n) * time.Second
}

// TestHelmSyncerPodValues: controller.resources size the nginx container
// and syncer.resources the syncer container; controller.extraArgs reach
// `syncer nginx` only for its own flags.
func TestHelmSyncerPodValues(t *testing.T) {
	objs, err := helmTemplate(t, []string{"dev"}, "controller.extraArgs.log-level=debug",
		"controller.extraArgs.start-timeout=45s", "controller.extraArgs.enable-ssl-passthrough=")
	if err != nil {
		t.Fatal(err)
	}
	w := workloadNamed(t, objs, syncerName)
	syncer, nginx := container(t, w, "syncer"), container(t, w, "nginx")
	if got := nginx.Resources.Requests.Cpu().String(); got != "100m" {
		t.Errorf("nginx container: cpu request %s, want controller.resources' 100m", got)
	}
	if got := syncer.Resources.Requests.Cpu().String(); got != "20m" {
		t.Errorf("syncer container: cpu request %s, want syncer.resources' 20m", got)
	}
	for _, c := range []corev1.Container{syncer, nginx} {
		if flagValue(t, c, "log-level") != "debug" || flagValue(t, c, "start-timeout") != "45s" {
			t.Errorf("%s: args %v lack --log-level=debug and --start-timeout=45s", c.Name, c.Args)
		}
	}
	if !slices.Contains(syncer.Args, "--enable-ssl-passthrough") || slices.Contains(nginx.Args, "--enable-ssl-passthrough") {
		t.Errorf("--enable-ssl-passthrough must reach the syncer container only: nginx %v", nginx.Args)
	}
	watcher := container(t, workloadNamed(t, objs, watcherName), "watcher")
	if flagValue(t, watcher, "log-level") != "debug" {
		t.Errorf("watcher: args %v lack --log-level=debug", watcher.Args)
	}
}
