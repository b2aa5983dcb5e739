package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The keeper starts nginx only once the syncer has written nginx.conf, and
// a stop while it waits ends the wait.
func TestKeeperWaitsForTheSyncersConf(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	conf := filepath.Join(t.TempDir(), "nginx.conf")

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if waitForConf(ctx, log, conf) {
		t.Fatal("waitForConf = true without nginx.conf")
	}

	done := make(chan bool, 1)
	go func() { done <- waitForConf(t.Context(), log, conf) }()
	select {
	case <-done:
		t.Fatal("waitForConf returned before nginx.conf was written")
	case <-time.After(3 * confPoll.Delay(1)):
	}
	if err := os.WriteFile(conf, []byte("events {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("waitForConf = false once nginx.conf exists")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("waitForConf still waits after nginx.conf was written")
	}
}

// `syncer nginx` takes no NATS flag: it holds no credentials.
func TestKeeperTakesNoCredentials(t *testing.T) {
	for _, flag := range []string{"--nats-url=nats://x", "--nats-password=x", "--kubeconfig=x"} {
		if err := nginxCommand(t.Context(), []string{flag}, nil, io.Discard, io.Discard); err == nil {
			t.Errorf("syncer nginx %s: accepted", flag)
		}
	}
}
