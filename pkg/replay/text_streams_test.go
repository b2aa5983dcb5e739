package replay

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"strings"
	"testing"
)

func TestWriteStreams(t *testing.T) {
	var b strings.Builder
	writeStreams(&b, &config.Configuration{
		L4: []config.L4Service{{Protocol: config.L4TCP, Port: 5432, Namespace: "db", Service: "pg", ServicePort: "5432", EncodeProxy: true,
			Endpoints: []config.Endpoint{{Address: "10.0.0.1", Port: 5432}}}, {Protocol: config.L4UDP, Port: 53, Namespace: "kube-system", Service: "dns", ServicePort: "dns"}},
		Passthrough: []config.PassthroughHost{{Hostname: "argo.example.com", Ingress: "argo/server", Backend: "argo-server-443"}},
	})
	for _, want := range []string{"TCP and UDP services (2)", "TCP 5432 -> db/pg:5432  1 endpoint: 10.0.0.1:5432", "PROXY decode false encode true",
		"UDP 53 -> kube-system/dns:dns  0 endpoints (connections are closed)", "SSL passthrough hosts (1)", "argo.example.com -> argo-server-443 (argo/server)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	writeStreams(&b, &config.Configuration{})
	if b.Len() != 0 {
		t.Errorf("nothing to list wrote %q", b.String())
	}
}
