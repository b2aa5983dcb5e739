package group

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	boom := errors.New("boom")
	waitCtx := func(ctx context.Context) error { <-ctx.Done(); return nil }
	cases := []struct {
		name    string
		failing func(context.Context) error
		cancel  bool
		wantErr error
		wantMsg string
	}{
		{"context cancel stops all cleanly", waitCtx, true, nil, ""},
		{"a failing part stops the others", func(context.Context) error { return boom }, false, boom, "bad: boom"},
		{"a part may finish early", func(context.Context) error { return nil }, true, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var stopped atomic.Int32
			other := func(ctx context.Context) error { <-ctx.Done(); stopped.Add(1); return nil }
			if tc.cancel {
				time.AfterFunc(10*time.Millisecond, cancel)
			}
			err := Run(ctx, quiet, Part{"good", other}, Part{"bad", tc.failing}, Part{"good2", other})
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if msg := errString(err); msg != tc.wantMsg {
				t.Fatalf("err %q, want %q", msg, tc.wantMsg)
			}
			if stopped.Load() != 2 {
				t.Fatalf("%d other parts stopped, want 2", stopped.Load())
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
