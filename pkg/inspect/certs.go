package inspect

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/nginx"
)

// errNoCertificate: a chain without a CERTIFICATE block.
var errNoCertificate = errors.New("no PEM certificate")

// Certificate is what nginx serves for a set of SNI names: the Secret,
// its leaf certificate's subject, issuer and validity, and the Ingresses
// whose routes use those names. It never holds the key.
type Certificate struct {
	Name string `json:"name"`
	// Hosts are the SNI names it is served for; Default: also for every
	// name no other certificate has.
	Hosts     []string  `json:"hosts"`
	Default   bool      `json:"default,omitempty"`
	Subject   string    `json:"subject,omitempty"`
	Issuer    string    `json:"issuer,omitempty"`
	DNSNames  []string  `json:"dnsNames,omitempty"`
	NotBefore time.Time `json:"notBefore"`
	NotAfter  time.Time `json:"notAfter"`
	Serial    string    `json:"serial,omitempty"`
	Ingresses []string  `json:"ingresses"`
	// Error says why the chain could not be read.
	Error string `json:"error,omitempty"`
}

// NewCertificates explains the certificates nginx holds, with the
// Ingresses of the routes of their hosts, sorted by name.
func NewCertificates(certs nginx.Certificates, routes nginx.Routes) []Certificate {
	ingresses := map[string][]string{} // host -> Ingresses of its routes
	for _, h := range routes.Hosts {
		for _, r := range h.Routes {
			if r.Ingress != "" && !slices.Contains(ingresses[h.Name], r.Ingress) {
				ingresses[h.Name] = append(ingresses[h.Name], r.Ingress)
			}
		}
	}
	out := make([]Certificate, 0, len(certs.Certificates))
	for _, c := range certs.Certificates {
		v := Certificate{Name: c.Name, Hosts: append([]string{}, c.Hosts...), Default: c.Name == certs.DefaultCertificate, Ingresses: []string{}}
		for _, h := range c.Hosts {
			for _, ing := range ingresses[h] {
				if !slices.Contains(v.Ingresses, ing) {
					v.Ingresses = append(v.Ingresses, ing)
				}
			}
		}
		slices.Sort(v.Ingresses)
		if err := v.setLeaf([]byte(c.Cert)); err != nil {
			v.Error = err.Error()
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b Certificate) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// setLeaf reads the first certificate of a PEM chain.
func (c *Certificate) setLeaf(chain []byte) error {
	block, _ := pem.Decode(chain)
	if block == nil || block.Type != "CERTIFICATE" {
		return errNoCertificate
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return err
	}
	c.Subject, c.Issuer, c.DNSNames = leaf.Subject.String(), leaf.Issuer.String(), leaf.DNSNames
	c.NotBefore, c.NotAfter, c.Serial = leaf.NotBefore.UTC(), leaf.NotAfter.UTC(), leaf.SerialNumber.Text(16)
	return nil
}

// WriteCertificatesTable prints one row per certificate, the time left
// counted from now.
func WriteCertificatesTable(w io.Writer, certs []Certificate, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CERTIFICATE\tSNI NAMES\tISSUER\tNOT AFTER\tEXPIRES\tINGRESSES")
	for i := range certs {
		c := &certs[i]
		hosts := strings.Join(c.Hosts, ",")
		if c.Default {
			hosts = strings.TrimPrefix(hosts+",(default)", ",")
		}
		if c.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\tunreadable: %s\t%s\n", c.Name, orDash(hosts), c.Error, orDash(strings.Join(c.Ingresses, ",")))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.Name, orDash(hosts), c.Issuer, c.NotAfter.Format(time.RFC3339),
			expiresIn(c.NotAfter.Sub(now)), orDash(strings.Join(c.Ingresses, ",")))
	}
	return tw.Flush()
}

// expiresIn says how long until expiry, in days when it is a day or more.
func expiresIn(d time.Duration) string {
	switch {
	case d <= 0:
		return "EXPIRED " + (-d).Round(time.Second).String() + " ago"
	case d < 24*time.Hour:
		return "in " + d.Round(time.Second).String()
	}
	return fmt.Sprintf("in %d days", int(d.Hours()/24))
}
