package demo

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/world"
)

// writeHostKubeconfig writes a kubeconfig for the forwarded API address.
func writeHostKubeconfig(w *world.World, o Options) error {
	data, err := os.ReadFile(w.Kubeconfig)
	if err != nil {
		return err
	}
	inside := w.CP.URL
	host := "https://" + o.API
	return os.WriteFile(filepath.Join(o.Dir, "host.kubeconfig"), []byte(strings.ReplaceAll(string(data), inside, host)), 0o600)
}

func printHowTo(out io.Writer, o Options, took time.Duration) {
	_, httpsPort, _ := strings.Cut(o.HTTPS, ":")
	bin := o.BinDir
	fmt.Fprintf(out, `
ingress-sync is running (started in %s): kube-apiserver + etcd, nats-server, the watcher,
one syncer with nginx, and the echo backends echo-a and echo-b, in a private network
namespace. The examples from deploy/examples are applied. Try, from another shell:

  curl -H 'Host: demo.example.com' http://%[2]s/               # echo-a
  curl -H 'Host: demo.example.com' http://%[2]s/api/users      # echo-b (Prefix /api)
  curl -H 'Host: x.apps.example.com' http://%[2]s/             # echo-a (wildcard, one label)
  curl -H 'Host: x.y.apps.example.com' http://%[2]s/           # 404 (two labels)
  curl -k --resolve secure.example.com:%[3]s:127.0.0.1 https://secure.example.com:%[3]s/   # TLS by SNI

Gateway API: the Gateway demo/demo-gateway (its HTTP listener served on %[8]s) and the
HTTPRoute demo/shop:
  curl -H 'Host: gateway.example.com' http://%[8]s/            # echo-a
  curl -H 'Host: gateway.example.com' http://%[8]s/checkout    # echo-b (PathPrefix /checkout)
  curl -H 'Host: demo.example.com' http://%[8]s/               # 404: the Ingresses are not on the Gateway

The event log (natscli from .cache/bin, built by make):
  .cache/bin/nats --server nats://%[4]s stream view INGRESS
  .cache/bin/nats --server nats://%[4]s stream view INGRESS --translate '%[5]s/syncer decode'
  %[5]s/syncer replay --nats-url nats://%[4]s --at $(date -u +%%Y-%%m-%%dT%%H:%%M:%%SZ)
  %[5]s/syncer fleet --nats-url nats://%[4]s     # every syncer's checksum, lag, last error

Logs, and the Kubernetes API for client-go tools:
  ls %[6]s/*.log   # watcher, syncer and control-plane logs
  export KUBECONFIG=%[6]s/host.kubeconfig
  kubectl -n demo describe ingress   # (kubectl, if installed) Problems and Sync as Events
  kubectl -n demo get gateway,httproute -o yaml   # their status (Accepted, Programmed, addresses)

Traffic metrics under ingress-nginx's names, and the syncer's own:
  curl -s http://%[7]s/metrics | grep -E '^nginx_ingress_controller_requests|^ingress_sync_'

Ctrl-C stops everything.
`, took.Round(time.Second), o.HTTP, httpsPort, o.NATS, bin, o.Dir, o.Metrics, o.Gateway)
}
