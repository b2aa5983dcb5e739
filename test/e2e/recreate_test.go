package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
	"github.com/ingress-sync/ingress-sync/test/testkit/world"
)

// TestStreamRecreated: the event stream deleted and created again (through
// the NATS API) while the watcher and the syncers run. The watcher
// republishes its state into the new stream, each syncer bootstraps from
// it, and every host keeps answering from its backend throughout: no 404
// in between. Afterwards the syncers' checksum is that of a replay of the
// new stream, which holds a change made during the recreation too.
func TestStreamRecreated(t *testing.T) {
	ns := setup(t)
	service(t, ns, "web")
	service(t, ns, "api")
	hosts := map[string]string{"a": "web", "b": "api", "c": "web"}
	for name, svc := range hosts {
		applyIngress(t, ours(ns, name, fixtures.Rule(name+"-"+ns+".example.com", fixtures.Prefix("/", svc, 80))))
	}
	for name, svc := range hosts {
		routes(t, nil, map[string]string{"http://" + name + "-" + ns + ".example.com/": svc})
	}
	converged(t)
	var loops []*loop
	for name, svc := range hosts {
		loops = append(loops, startLoop(t, "http://"+name+"-"+ns+".example.com/", svc))
	}

	recreateStream(t)
	applyIngress(t, ours(ns, "d", fixtures.Rule("d-"+ns+".example.com", fixtures.Prefix("/", "api", 80))))
	routes(t, nil, map[string]string{"http://d-" + ns + ".example.com/": "api"})
	sum := converged(t)
	for _, l := range loops {
		l.finish(t)
	}
	if replayed := replayChecksum(t, streamLastSeq(t)); replayed != sum {
		t.Fatalf("syncers converged on %s, a replay of the new stream gives %s", sum, replayed)
	}
}

// recreateStream deletes the event stream and creates it again with the
// same configuration, as an operator could with the NATS API.
func recreateStream(t *testing.T) {
	t.Helper()
	js := jetStream(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, world.Stream)
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	cfg.Metadata = nil
	if err := js.DeleteStream(ctx, world.Stream); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateOrUpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
}

// replayChecksum is the checksum `syncer replay` rebuilds at stream
// sequence seq, with the model flags of the World's syncers.
func replayChecksum(t *testing.T, seq uint64) string {
	t.Helper()
	s := w.Syncers[0]
	args := append([]string{"replay", "--at", strconv.FormatUint(seq, 10), "--output", "json",
		"--nats-url", w.NATSURL, "--stream", world.Stream, "--subject-prefix", world.Prefix,
		"--controller-class", world.ControllerClass, "--ingress-class", world.IngressClass,
		"--configmap", configMapNamespace + "/" + configMapName, "--enable-ssl-passthrough",
		"--http-port", strconv.Itoa(s.HTTPPort), "--https-port", strconv.Itoa(s.HTTPSPort),
		"--status-port", strconv.Itoa(s.StatusPort)}, l4Args()...)
	cmd := exec.CommandContext(t.Context(), filepath.Join(os.Getenv(envBin), "syncer"), args...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("syncer replay: %v", err)
	}
	var snap struct {
		Configuration struct {
			Checksum string `json:"checksum"`
		} `json:"configuration"`
	}
	if err := json.Unmarshal(out, &snap); err != nil || snap.Configuration.Checksum == "" {
		t.Fatalf("syncer replay output (%v): %s", err, out)
	}
	return snap.Configuration.Checksum
}
