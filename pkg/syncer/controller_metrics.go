package syncer

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"crypto/x509"
	"encoding/pem"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ControllerLabels are ingress-nginx's controller_namespace,
// controller_class and controller_pod labels.
type ControllerLabels struct {
	Namespace, Class, Pod string
}

func (l ControllerLabels) prometheus() prometheus.Labels {
	return prometheus.Labels{"controller_namespace": l.Namespace, "controller_class": l.Class, "controller_pod": l.Pod}
}

// ControllerMetrics keeps ingress-nginx's controller metrics of the
// applies the loop reports to Observe (Options.Observe): reloads
// (nginx_ingress_controller_success and _errors, and the last reload's
// outcome and time), the running configuration's hash, and the expiry of
// the served certificates.
type ControllerMetrics struct {
	hash, lastOK, lastOKTime prometheus.Gauge
	success, errors          prometheus.Counter
	sslExpire                *prometheus.GaugeVec
	class                    string

	mu    sync.Mutex
	certs uint64 // digest of the certificate names and checksums sslExpire shows
	// lastCerts are the Certificates of the last Configuration seen.
	lastCerts []config.Certificate
}

// NewControllerMetrics registers the metrics on reg.
func NewControllerMetrics(reg prometheus.Registerer, l ControllerLabels) *ControllerMetrics {
	const ns = "nginx_ingress_controller"
	cl := l.prometheus()
	m := &ControllerMetrics{class: l.Class,
		hash: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "config_hash", ConstLabels: cl,
			Help: "Running configuration hash actually running"}),
		lastOK: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "config_last_reload_successful", ConstLabels: cl,
			Help: "Whether the last configuration reload attempt was successful"}),
		lastOKTime: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "config_last_reload_successful_timestamp_seconds",
			ConstLabels: cl, Help: "Timestamp of the last successful configuration reload."}),
		success: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "success", ConstLabels: cl,
			Help: "Cumulative number of Ingress controller reload operations"}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "errors", ConstLabels: cl,
			Help: "Cumulative number of Ingress controller errors during reload operations"}),
		sslExpire: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "ssl_expire_time_seconds",
			Help: "Number of seconds since 1970 to the SSL Certificate expire."},
			[]string{"namespace", "class", "host", "secret_name", "identifier"}),
	}
	reg.MustRegister(m.hash, m.lastOK, m.lastOKTime, m.success, m.errors, m.sslExpire)
	return m
}

// Observe counts one apply of next (an Options.Observe): a reload (the
// first apply, or one that changed nginx.conf) as a success or an error;
// a successful apply sets the hash and the certificates' expiry.
func (m *ControllerMetrics) Observe(next *config.Configuration, reload bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case err != nil && reload:
		m.errors.Inc()
		m.lastOK.Set(0)
	case err == nil:
		if reload {
			m.success.Inc()
			m.lastOK.Set(1)
			m.lastOKTime.Set(float64(time.Now().Unix()))
		}
		m.hash.Set(configHash(next.Checksum))
		m.setCertificates(next.Certificates)
	}
}

// configHash is the checksum as a number (ingress-nginx's is a hash too).
func configHash(checksum string) float64 {
	h := fnv.New64a()
	h.Write([]byte(checksum))
	return float64(h.Sum64() >> 11) // 53 bits: exact as a float64
}

// setCertificates shows the expiry of every host of certs, when their
// checksums changed.
func (m *ControllerMetrics) setCertificates(certs []config.Certificate) {
	// The same certificates as last time (an endpoint patch shares them):
	// nothing to read. Otherwise a digest of names and checksums says
	// whether they changed, without building a string of them all.
	if len(certs) == len(m.lastCerts) && (len(certs) == 0 || &certs[0] == &m.lastCerts[0]) {
		return
	}
	m.lastCerts = certs
	h := fnv.New64a()
	for i := range certs {
		h.Write([]byte(certs[i].Name))
		h.Write([]byte{0})
		h.Write([]byte(certs[i].Checksum))
		h.Write([]byte{0})
	}
	sum := h.Sum64()
	if sum == m.certs {
		return
	}
	m.certs = sum
	m.sslExpire.Reset()
	for i := range certs {
		c := &certs[i]
		leaf := firstCertificate(c.Cert)
		if leaf == nil {
			continue
		}
		ns, name, _ := strings.Cut(c.Name, "/")
		for _, host := range c.Hosts {
			m.sslExpire.WithLabelValues(ns, m.class, host, name, leaf.SerialNumber.String()).Set(float64(leaf.NotAfter.Unix()))
		}
	}
}

// firstCertificate parses the first certificate of a PEM chain.
func firstCertificate(chain []byte) *x509.Certificate {
	for {
		var b *pem.Block
		b, chain = pem.Decode(chain)
		if b == nil {
			return nil
		}
		if b.Type == "CERTIFICATE" {
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil
			}
			return c
		}
	}
}

// Running returns the Configuration nginx serves (nil before the first):
// the traffic metrics read its backends' Service names.
func (n *Nginx) Running() *config.Configuration { return n.applier.Running() }
