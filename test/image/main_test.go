// Package image runs the container image that make image builds
// (deploy/Dockerfile) the way the deploy/ manifests run it, and checks what
// a user of the image meets: the watcher's pod, and the syncer's pod with
// its two containers (`syncer run --nginx-mode=external` and `syncer nginx`)
// in one process namespace with their shared emptyDirs, as uid 10001, with
// a read-only root file system and no capability, against a real
// kube-apiserver and a nats-server configured from the chart's ConfigMap.
//
// Each container's command, arguments, environment, volumes and security
// context are read from the Helm chart as `helm template` renders it, and
// turned into podman flags (pod.go); a setting the translation does not
// know fails the test, so the test and the manifests cannot drift apart.
// What cannot be as in a cluster is said where it is done: the Service
// addresses (the NATS URL, the API server) are the test's, the syncer's pod
// shares the test's network namespace and the watcher's has its own (both
// listen on :10254), one replica of each runs, and resources, probes'
// periods and scheduling are not applied.
//
// Everything runs in a private network namespace the test makes
// (test/testkit/netns), as root, with podman (make image-deps). The
// image is $INGRESS_SYNC_IMAGE, by default localhost/ingress-sync:dev, which
// make image builds and make test builds first. The test fails, never
// skips, when podman, the image, helm or the control plane is missing.
package image

import (
	"fmt"
	"os"
	"testing"

	"github.com/ingress-sync/ingress-sync/test/testkit/netns"
)

func TestMain(m *testing.M) {
	os.Exit(mainImage(m))
}

func mainImage(m *testing.M) int {
	if !netns.Inside() {
		code, err := netns.Reexec()
		if err != nil {
			fmt.Fprintln(os.Stderr, "image:", err)
			return 1
		}
		return code
	}
	if err := netns.Setup(); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		return 1
	}
	return m.Run()
}
