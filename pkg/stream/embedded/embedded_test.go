package embedded_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/pkg/stream/embedded"
)

func TestStartRejectsBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts embedded.Options
	}{
		{"no store dir", embedded.Options{Port: -1}},
		{"negative max payload", embedded.Options{StoreDir: t.TempDir(), Port: -1, MaxPayload: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := embedded.Start(context.Background(), tc.opts); !errors.Is(err, stream.ErrInvalidConfig) {
				t.Errorf("Start = %v, want ErrInvalidConfig", err)
			}
		})
	}
}
