package replay

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteBackendsTable writes backends as a table: name, number of
// endpoints, load balancing, and the first endpoints.
func WriteBackendsTable(w io.Writer, backends []config.Backend) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BACKEND\tENDPOINTS\tLOAD BALANCE\tADDRESSES")
	for i := range backends {
		b := &backends[i]
		lb := orDefault(b.LoadBalance, config.LoadBalanceRoundRobin)
		if b.UpstreamHashBy != "" {
			lb += " (hash " + b.UpstreamHashBy + ")"
		}
		if b.Affinity != nil {
			lb += " (cookie " + b.Affinity.CookieName + ")"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", b.Name, len(b.Endpoints), lb, addresses(b.Endpoints))
	}
	return tw.Flush()
}

// addresses lists at most maxListed endpoints.
func addresses(eps []config.Endpoint) string {
	if len(eps) == 0 {
		return "-"
	}
	list := make([]string, 0, min(len(eps), maxListed))
	for _, e := range eps[:min(len(eps), maxListed)] {
		list = append(list, endpointString(e))
	}
	return strings.Join(list, ", ") + more(len(eps))
}
