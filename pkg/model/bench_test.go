package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/cputime"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// benchPair generates one self-signed certificate and key; every TLS
// Secret of a benchmark reuses the bytes.
func benchPair(b testing.TB) (certPEM, keyPEM []byte) {
	b.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "*.example.com"},
		DNSNames: []string{"*.example.com"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		b.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		b.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})
}

// benchObjects returns n Ingresses, each with 2 Prefix paths to its own
// Service, an EndpointSlice of 10 ready endpoints, and for one in ten a
// TLS Secret.
func benchObjects(b testing.TB, n int) []runtime.Object {
	cert, key := benchPair(b)
	out := make([]runtime.Object, 0, 4*n)
	for i := range n {
		ns, name := fmt.Sprintf("ns-%d", i%100), fmt.Sprintf("app-%d", i)
		host := name + ".example.com"
		eps := make([]discoveryv1.Endpoint, 10)
		for j := range eps {
			eps[j] = ready(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, j))
		}
		opts := []ingOpt{created(i), rule(host, prefix("/", name, 80), prefix("/api", name, 80))}
		if i%10 == 0 {
			opts = append(opts, tlsFor(name+"-tls", host))
			out = append(out, &corev1.Secret{ObjectMeta: objMeta(ns, name+"-tls"), Type: corev1.SecretTypeTLS,
				Data: map[string][]byte{corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key}})
		}
		out = append(out, service(ns, name, svcPort("http", 80)),
			slice(ns, name+"-abcde", name, "http", 8080, eps...),
			newIngress(ns, name, opts...))
	}
	return out
}

var benchSizes = []int{100, 1000, 10000}

// reportCPU adds cpu-ns/op, the process CPU time per operation since start:
// on a shared machine wall time (ns/op) grows with other load, CPU time
// much less.
func reportCPU(b *testing.B, start time.Duration) {
	if cpu := cputime.Process() - start; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

func BenchmarkBuild(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s := newTestStore(b, benchObjects(b, n)...)
			opts := testOptions()
			b.ReportAllocs()
			b.ResetTimer()
			start := cputime.Process()
			for b.Loop() {
				Build(s, opts)
			}
			reportCPU(b, start)
		})
	}
}

func BenchmarkApply(b *testing.B) {
	evs := benchObjects(b, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s := NewStore(ingress.NewSource())
		for _, o := range evs {
			if _, err := s.Apply(upsertEvent(o)); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// benchConfigs builds 10k Ingresses, then again with one endpoint changed.
func benchConfigs(b *testing.B) (old, new *config.Configuration) {
	s := newTestStore(b, benchObjects(b, 10000)...)
	opts := testOptions()
	old = Build(s, opts)
	changed := slice("ns-42", "app-42-abcde", "app-42", "http", 8080, ready("10.0.0.42"))
	if _, err := s.Apply(upsertEvent(changed)); err != nil {
		b.Fatal(err)
	}
	return old, Build(s, opts)
}

func BenchmarkDiff(b *testing.B) {
	old, new := benchConfigs(b)
	ch := config.Diff(old, new)
	if ch.Reload || len(ch.BackendsUpserted) != 1 {
		b.Fatalf("want one backend upserted and no reload, got %+v", summarize(ch))
	}
	b.Run("10000", func(b *testing.B) {
		b.ReportAllocs()
		start := cputime.Process()
		for b.Loop() {
			config.Diff(old, new)
		}
		reportCPU(b, start)
	})
}

func BenchmarkChecksum(b *testing.B) {
	cfg, _ := benchConfigs(b)
	b.Run("10000", func(b *testing.B) {
		b.ReportAllocs()
		start := cputime.Process()
		for b.Loop() {
			cfg.ComputeChecksum()
		}
		reportCPU(b, start)
	})
}

// BenchmarkEndpointChange is the syncer's work for one EndpointSlice
// change at n Ingresses: Incremental.Apply and Build (the endpoint patch
// and its checksum) and the Diff against the previous Configuration.
func BenchmarkEndpointChange(b *testing.B) {
	for _, n := range []int{10000, 50000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			in := NewIncremental(newTestStore(b, benchObjects(b, n)...), testOptions())
			cur := in.Build()
			b.ReportAllocs()
			b.ResetTimer()
			start := cputime.Process()
			i := 0
			for b.Loop() {
				i++
				app := i % n
				ev := upsertEvent(slice(fmt.Sprintf("ns-%d", app%100), fmt.Sprintf("app-%d-abcde", app), fmt.Sprintf("app-%d", app), "http", 8080,
					ready(fmt.Sprintf("10.1.%d.%d", i>>8&255, i&255))))
				if _, err := in.Apply(ev); err != nil {
					b.Fatal(err)
				}
				next := in.Build()
				if ch := config.Diff(cur, next); len(ch.BackendsUpserted) != 1 || len(ch.ServersUpserted) != 0 {
					b.Fatalf("change %+v", ch)
				}
				cur = next
			}
			reportCPU(b, start)
		})
	}
}
