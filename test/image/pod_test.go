package image

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A pod of a Deployment, run with podman as the kubelet would run it. The
// translation of the pod template into podman flags is here; every field of
// the template is either translated, or listed as one that means nothing on
// one machine, or fails the test.

// podEnv is what the kubelet would give a pod: its name and namespace, the
// Secrets its env reads, the Service environment, the service account
// token, and the values that name cluster addresses.
type podEnv struct {
	name, namespace string
	secrets         map[string]map[string]string // Secret name → key → value
	// serviceEnv is the kubelet's KUBERNETES_SERVICE_HOST and _PORT.
	serviceEnv map[string]string
	// tokenDir holds token, ca.crt and namespace of the pod's service
	// account, mounted where the kubelet mounts them unless the pod says
	// automountServiceAccountToken: false.
	tokenDir string
	// replace gives the test's value of an env var whose value names a
	// cluster address (NATS_URL: the Service nats); it fails the test on a
	// value it does not expect.
	replace func(name, value string) string
}

// Pod spec fields with no meaning for one pod on one machine.
var podIgnored = map[string]string{
	"affinity":                  "scheduling",
	"nodeSelector":              "scheduling",
	"tolerations":               "scheduling",
	"topologySpreadConstraints": "scheduling",
	"priorityClassName":         "scheduling",
	"imagePullSecrets":          "the image is local",
	"serviceAccountName":        "the test makes the token of this service account (tokenDir)",
	"enableServiceLinks":        "checked: the test gives only the kubelet's KUBERNETES_SERVICE_HOST/PORT",
}

// Container fields with no meaning here.
var containerIgnored = map[string]string{
	"image":           "the image under test replaces it",
	"imagePullPolicy": "the image is local",
	"ports":           "informational; the pods run in network namespaces of the test",
	"resources":       "not enforced here (cgroup v1 hybrid); the scheduler's and the kubelet's",
	"readinessProbe":  "the test polls it (probe)",
	"startupProbe":    "the test polls the readiness probe",
	"livenessProbe":   "the test polls the readiness probe",
	"lifecycle":       "preStop: its command must exist in the image (TestImageContents)",
}

// runArgs returns the flags of `podman run` for container c of the pod
// template spec, after the pod's own flags, or fails the test on a setting
// it cannot run as the manifest says.
func runArgs(t *testing.T, spec corev1.PodSpec, c corev1.Container, env podEnv, volumes map[string]string, image string) []string {
	t.Helper()
	checkFields(t, "pod spec", spec, append(slices.Collect(maps.Keys(podIgnored)),
		"containers", "volumes", "securityContext", "shareProcessNamespace", "terminationGracePeriodSeconds",
		"automountServiceAccountToken"))
	checkFields(t, "container "+c.Name, c, append(slices.Collect(maps.Keys(containerIgnored)),
		"name", "command", "args", "env", "securityContext", "volumeMounts", "workingDir"))
	if spec.EnableServiceLinks == nil || *spec.EnableServiceLinks {
		t.Errorf("enableServiceLinks is not false: the kubelet would add every Service's variables, which the test does not")
	}
	var args []string

	// Security context: the container's fields override the pod's.
	psc, csc := spec.SecurityContext, c.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	if csc == nil {
		csc = &corev1.SecurityContext{}
	}
	checkFields(t, "pod securityContext", psc, []string{"runAsNonRoot", "runAsUser", "runAsGroup", "seccompProfile"})
	checkFields(t, c.Name+" securityContext", csc, []string{"allowPrivilegeEscalation", "readOnlyRootFilesystem",
		"runAsNonRoot", "runAsUser", "runAsGroup", "capabilities", "seccompProfile"})
	uid, gid := first(csc.RunAsUser, psc.RunAsUser), first(csc.RunAsGroup, psc.RunAsGroup)
	if uid == nil || gid == nil {
		t.Fatalf("%s: no runAsUser or runAsGroup: the image's USER would apply, the test runs what the manifest says", c.Name)
	}
	if nonRoot := first(csc.RunAsNonRoot, psc.RunAsNonRoot); nonRoot != nil && *nonRoot && *uid == 0 {
		t.Fatalf("%s: runAsNonRoot with runAsUser 0", c.Name)
	}
	args = append(args, "--user", fmt.Sprintf("%d:%d", *uid, *gid))
	seccomp := csc.SeccompProfile
	if seccomp == nil {
		seccomp = psc.SeccompProfile
	}
	switch {
	case seccomp == nil || seccomp.Type == corev1.SeccompProfileTypeRuntimeDefault:
		// podman's default profile
	case seccomp.Type == corev1.SeccompProfileTypeUnconfined:
		args = append(args, "--security-opt", "seccomp=unconfined")
	default:
		t.Fatalf("%s: seccomp profile %s: the test runs RuntimeDefault or Unconfined", c.Name, seccomp.Type)
	}
	if csc.AllowPrivilegeEscalation != nil && !*csc.AllowPrivilegeEscalation {
		args = append(args, "--security-opt", "no-new-privileges")
	}
	if csc.ReadOnlyRootFilesystem != nil && *csc.ReadOnlyRootFilesystem {
		// No tmpfs on /tmp, /run and /var/tmp either: the kubelet adds none.
		args = append(args, "--read-only", "--read-only-tmpfs=false")
	}
	if caps := csc.Capabilities; caps != nil {
		for _, d := range caps.Drop {
			args = append(args, "--cap-drop", string(d))
		}
		for _, a := range caps.Add {
			args = append(args, "--cap-add", string(a))
		}
	}

	// Environment, in order: a value may refer to earlier ones as $(NAME).
	vars := map[string]string{}
	var names []string
	for k, v := range env.serviceEnv {
		vars[k] = v
		names = append(names, k)
	}
	sort.Strings(names)
	for _, e := range c.Env {
		var v string
		switch {
		case e.ValueFrom == nil:
			v = expand(e.Value, vars)
		case e.ValueFrom.FieldRef != nil:
			switch e.ValueFrom.FieldRef.FieldPath {
			case "metadata.name":
				v = env.name
			case "metadata.namespace":
				v = env.namespace
			default:
				t.Fatalf("%s: env %s: fieldRef %s: the test gives metadata.name and metadata.namespace", c.Name, e.Name, e.ValueFrom.FieldRef.FieldPath)
			}
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			val, ok := env.secrets[ref.Name][ref.Key]
			if !ok {
				t.Fatalf("%s: env %s: Secret %s has no key %s", c.Name, e.Name, ref.Name, ref.Key)
			}
			v = val
		default:
			t.Fatalf("%s: env %s: a valueFrom the test does not give", c.Name, e.Name)
		}
		v = env.replace(e.Name, v)
		if _, ok := vars[e.Name]; !ok {
			names = append(names, e.Name)
		}
		vars[e.Name] = v
	}
	for _, n := range names {
		args = append(args, "--env", n+"="+vars[n])
	}

	// Volumes: the pod's emptyDirs are folders of the test, shared by the
	// containers that mount them; the token as the kubelet mounts it.
	for _, m := range c.VolumeMounts {
		checkFields(t, c.Name+" volumeMount "+m.Name, m, []string{"name", "mountPath", "readOnly"})
		dir, ok := volumes[m.Name]
		if !ok {
			t.Fatalf("%s: volumeMount %s: no such volume", c.Name, m.Name)
		}
		opt := ""
		if m.ReadOnly {
			opt = ":ro"
		}
		args = append(args, "--volume", dir+":"+m.MountPath+opt)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		if env.tokenDir == "" {
			t.Fatalf("%s: the pod mounts a service account token and the test has none", c.Name)
		}
		args = append(args, "--volume", env.tokenDir+":/var/run/secrets/kubernetes.io/serviceaccount:ro")
	}
	if c.WorkingDir != "" {
		args = append(args, "--workdir", c.WorkingDir)
	}

	// Command and arguments, with $(NAME) expanded as the kubelet does.
	if len(c.Command) == 0 {
		t.Fatalf("%s: no command: the test runs what the manifest says, not the image's ENTRYPOINT", c.Name)
	}
	cmd := make([]string, len(c.Command))
	for i, s := range c.Command {
		cmd[i] = expand(s, vars)
	}
	entry, err := json.Marshal(cmd)
	if err != nil {
		t.Fatal(err)
	}
	args = append(args, "--entrypoint", string(entry), image)
	for _, a := range c.Args {
		args = append(args, expand(a, vars))
	}
	return args
}

// podVolumes makes a folder for each emptyDir of the pod: world-writable,
// as the kubelet makes them.
func podVolumes(t *testing.T, spec corev1.PodSpec) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, v := range spec.Volumes {
		if v.EmptyDir == nil {
			t.Fatalf("volume %s: only emptyDir volumes are run here", v.Name)
		}
		checkFields(t, "volume "+v.Name, v.VolumeSource, []string{"emptyDir"})
		if v.EmptyDir.Medium != "" {
			t.Fatalf("volume %s: emptyDir medium %s", v.Name, v.EmptyDir.Medium)
		}
		dir := filepath.Join(t.TempDir(), v.Name)
		if err := os.Mkdir(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		out[v.Name] = dir
	}
	return out
}

// expand replaces $(NAME) by vars[NAME] when NAME is defined, and $$ by $,
// as the kubelet does in command, args and env values.
func expand(s string, vars map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteByte(s[i])
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := vars[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// checkFields fails the test for each field of v (as JSON) that is not in
// known: a setting the manifests gained and the test does not run.
func checkFields(t *testing.T, what string, v any, known []string) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for k := range m {
		if !slices.Contains(known, k) {
			t.Errorf("%s: field %q is set in the chart and test/image does not run it: translate it in pod_test.go", what, k)
		}
	}
}

func first[T any](ps ...*T) *T {
	for _, p := range ps {
		if p != nil {
			return p
		}
	}
	return nil
}

// containerPort returns the number of c's port named name, or the number
// itself.
func containerPort(t *testing.T, c corev1.Container, name string) int {
	t.Helper()
	if n, err := strconv.Atoi(name); err == nil {
		return n
	}
	for _, p := range c.Ports {
		if p.Name == name {
			return int(p.ContainerPort)
		}
	}
	t.Fatalf("%s has no port %s", c.Name, name)
	return 0
}
