package replay

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"fmt"
	"strings"
)

// clientAuthSettings describes a host's client certificate verification
// for the routes table: the CA Secret, not its certificates.
func clientAuthSettings(c *config.ClientAuth) string {
	s := []string{"clientAuth", "secret=" + c.Secret, "verify=" + c.Verify, fmt.Sprintf("depth=%d", c.Depth),
		fmt.Sprintf("cas=%d", strings.Count(c.CA, "-----BEGIN CERTIFICATE-----"))}
	if len(c.Revoked) > 0 {
		s = append(s, fmt.Sprintf("revoked=%d", len(c.Revoked)))
	}
	if c.ErrorPage != "" {
		s = append(s, "errorPage="+c.ErrorPage)
	}
	if c.PassCertificate {
		s = append(s, "passCertificate=true")
	}
	if c.MatchCN != "" {
		s = append(s, "matchCN="+c.MatchCN)
	}
	return strings.Join(s, " ")
}
