package syncer

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"errors"
	"net"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
)

// TestListenCheckLeavesOutUnbindablePorts: a TCP service whose port nginx
// could not listen on is left out with a Problem on its ConfigMap, and the
// other service beside it is applied.
func TestListenCheckLeavesOutUnbindablePorts(t *testing.T) {
	h := start(t, Options{
		Model: model.Options{ControllerClass: "k8s.io/ingress-sync", IngressClass: "nginx", TCPServicesConfigMap: "kube-system/tcp"},
		ListenCheck: func(s config.L4Service) error {
			if s.Port == 9001 {
				return errors.New("address already in use")
			}
			return nil
		},
	})
	baseObjects(h)
	h.send(events.OpCreate, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "tcp"},
		Data: map[string]string{"9000": "default/web:80", "9001": "default/web:80"}})
	h.s.CaughtUp(t.Context())
	h.waitCalls(1)
	h.settle()
	cfg := h.s.Running()
	if len(cfg.L4) != 1 || cfg.L4[0].Port != 9000 {
		t.Fatalf("applied L4 %+v, want only port 9000", cfg.L4)
	}
	var found bool
	for _, p := range cfg.Problems {
		found = found || p.Kind == config.ProblemKindConfigMap && p.Name == "tcp" && strings.Contains(p.Reason, `TCP port "9001": nginx cannot listen on it: address already in use`)
	}
	if !found {
		t.Errorf("no Problem for port 9001 in %+v", cfg.Problems)
	}
}

func TestBindable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := bindable(config.L4TCP, l.Addr().String()); err == nil {
		t.Errorf("a port in use is bindable")
	}
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := c.LocalAddr().String()
	if err := bindable(config.L4UDP, addr); err == nil {
		t.Errorf("a UDP port in use is bindable")
	}
	c.Close()
	if err := bindable(config.L4UDP, addr); err != nil {
		t.Errorf("a free UDP port: %v", err)
	}
}
