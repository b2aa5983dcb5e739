package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"cmp"
	"slices"
	"sort"
)

// tlsClaim is the TLS setting of one host on one port: the Secret (Name
// "" for the default certificate) and the oldest Ingress that listed the
// host.
type tlsClaim struct {
	host   string
	secret intent.Key
	entry  *intent.Entry
}

// certState is a Certificate while it is built.
type certState struct {
	name  string
	entry *secretEntry
	// fallback is set for Options.FallbackCertificate.
	fallback *config.Certificate
	hosts    []string
}

// certificates are the certificates of one Build, by Name.
type certificates struct {
	byName      map[string]*certState
	defaultCert *certState
}

// buildTLS gives every host listed in spec.tls of a served Ingress its
// certificate:
//
//   - Hosts are matched exactly against rule hosts (Server.TLS); a spec.tls
//     entry without hosts applies to every rule host of its Ingress. A TLS
//     host that no rule names gets its certificate (SNI) but no Server.
//   - A host listed by several Ingresses with different Secrets takes the
//     Secret of the oldest; the others get a Problem.
//   - The Secret must be a kubernetes.io/tls Secret in the entry's
//     namespace (or the one its source names, intent.TLS.Namespace) whose
//     tls.crt and tls.key form a valid key pair; otherwise,
//     or with an empty secretName, the host is served the default
//     certificate (a Problem says why, except for an empty secretName).
//     A certificate that does not cover its host is used, with a Problem.
//   - The default certificate is Options.DefaultSSLCertificate when it is a
//     valid TLS Secret, else Options.FallbackCertificate. Hosts served by it
//     because theirs is missing are not listed in its Hosts.
//   - Server.SSLRedirect of a TLS host is the ssl-redirect annotation of the
//     Ingress that listed it (the oldest), else Global.SSLRedirect.
func (b *builder) buildTLS() {
	for _, e := range b.entries {
		for _, t := range e.TLS {
			hosts := t.Hosts
			if len(hosts) == 0 {
				hosts = ruleHosts(e, t.Port)
			}
			secret := intent.Key{}
			if t.Secret != "" {
				secret = intent.Key{Namespace: cmp.Or(t.Namespace, e.Key.Namespace), Name: t.Secret}
			}
			for _, h := range hosts {
				b.claimTLS(e, t.Port, h, secret)
			}
		}
	}
	b.certs = b.resolveCertificates()
}

// claimTLS claims host on nginx port port (0: nginx's own HTTPS port)
// for secret: the Servers and certificates of one port are apart from
// those of another (config.ServerKey).
// On a Gateway's port the default server name claims the certificate of
// SNI names no other host of the port has (a listener without hostname).
func (b *builder) claimTLS(e *intent.Entry, port int, host string, secret intent.Key) {
	portDefault := port != 0 && host == config.DefaultServerName
	if err := intent.ValidHost(host); err != nil && !portDefault {
		b.entryProblem(e, "tls host %q %v; left out", host, err)
		return
	}
	key := config.ServerKey(port, host)
	c, ok := b.tls[key]
	if !ok {
		b.tls[key] = &tlsClaim{host: host, secret: secret, entry: e}
		return
	}
	if c.secret != secret {
		b.entryProblem(e, "tls host %s: secret %q ignored, %s is older and its secret %q is used",
			host, secret.Name, c.entry, c.secret.Name)
	}
}

// ruleHosts returns the valid hosts of e's rules on nginx port port
// (invalid ones have their Problem from the rule), without the default
// server.
func ruleHosts(e *intent.Entry, port int) []string {
	var out []string
	for _, r := range e.Rules {
		if r.Raw != "" && r.Err == nil && r.Port == port {
			out = append(out, r.Raw)
		}
	}
	return out
}

// resolveCertificates finds the default certificate and the certificate
// of every claimed host.
func (b *builder) resolveCertificates() certificates {
	cs := certificates{byName: map[string]*certState{}}
	cs.defaultCert = b.defaultCertificate(&cs)
	hosts := make([]string, 0, len(b.tls))
	for h := range b.tls {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		c := b.tls[h]
		if c.secret.Name == "" {
			continue
		}
		entry := b.s.secrets[c.secret]
		switch {
		case entry == nil:
			b.entryProblem(c.entry, "tls host %s: secret %s not found; the default certificate is used", c.host, c.secret)
		case entry.err != nil:
			b.entryProblem(c.entry, "tls host %s: secret %s %v; the default certificate is used", c.host, c.secret, entry.err)
		default:
			if c.host != config.DefaultServerName && entry.leaf.VerifyHostname(c.host) != nil {
				b.entryProblem(c.entry, "tls host %s: the certificate of secret %s does not cover it (used anyway)", c.host, c.secret)
			}
			cert := cs.get(c.secret.String(), entry)
			cert.hosts = append(cert.hosts, h)
		}
	}
	return cs
}

func (cs *certificates) get(name string, entry *secretEntry) *certState {
	c := cs.byName[name]
	if c == nil {
		c = &certState{name: name, entry: entry}
		cs.byName[name] = c
	}
	return c
}

// defaultCertificate resolves Options.DefaultSSLCertificate, falling back
// to Options.FallbackCertificate; nil when there is neither.
func (b *builder) defaultCertificate(cs *certificates) *certState {
	if name := b.opts.DefaultSSLCertificate; name != "" {
		key, err := intent.ParseKey(name)
		if err != nil {
			b.problem(config.ProblemKindOptions, "", "default-ssl-certificate", "%v", err)
		} else if entry := b.s.secrets[key]; entry == nil {
			b.problem("Secret", key.Namespace, key.Name, "default SSL certificate not found; the fallback certificate is used")
		} else if entry.err != nil {
			b.problem("Secret", key.Namespace, key.Name, "default SSL certificate %v; the fallback certificate is used", entry.err)
		} else {
			return cs.get(key.String(), entry)
		}
	}
	if f := b.opts.FallbackCertificate; f != nil {
		c := &certState{name: config.FallbackCertificateName, fallback: f}
		cs.byName[config.FallbackCertificateName] = c
		return c
	}
	return nil
}

// finish returns the certificates sorted by Name: the default one and
// those serving at least one host.
func (cs *certificates) finish() []config.Certificate {
	out := make([]config.Certificate, 0, len(cs.byName))
	for _, c := range cs.byName {
		if len(c.hosts) == 0 && c != cs.defaultCert {
			continue
		}
		hosts := c.hosts
		if hosts == nil {
			hosts = []string{}
		}
		cert := config.Certificate{Name: c.name, Hosts: hosts}
		if f := c.fallback; f != nil {
			cert.Cert, cert.Key, cert.Checksum = f.Cert, f.Key, f.Checksum
			if cert.Checksum == "" {
				cert.Checksum = config.CertificateChecksum(f.Cert, f.Key)
			}
		} else {
			cert.Cert, cert.Key, cert.Checksum = c.entry.cert, c.entry.key, c.entry.checksum
		}
		out = append(out, cert)
	}
	slices.SortFunc(out, func(a, b config.Certificate) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// defaultName is the Name of the default certificate, "" when none.
func (cs *certificates) defaultName() string {
	if cs.defaultCert == nil {
		return ""
	}
	return cs.defaultCert.name
}
