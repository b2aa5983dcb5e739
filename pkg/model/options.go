package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"errors"
	"fmt"
	"strings"
)

// ErrInvalidOption is returned (wrapped) by Options.Validate.
var ErrInvalidOption = errors.New("invalid option")

// Options are the controller flags that Build depends on. Build never
// fails on bad options: Validate them once at start-up; Build records what it
// cannot use as a Problem of kind "Options".
type Options struct {
	// ControllerClass is the spec.controller value of the IngressClasses we
	// implement, e.g. ingress.DefaultControllerClass.
	ControllerClass string
	// IngressClass is the class name we answer to, e.g. ingress.DefaultIngressClass: as
	// spec.ingressClassName (when no IngressClass of that name says
	// otherwise) and as the legacy kubernetes.io/ingress.class annotation.
	IngressClass string
	// WatchIngressWithoutClass serves Ingresses that name no class at all.
	WatchIngressWithoutClass bool
	// DefaultBackendService is "namespace/name" of the Service answering
	// requests that no rule matches, or "" for the built-in 404. Its first
	// port is used. An Ingress's spec.defaultBackend takes precedence.
	DefaultBackendService string
	// DefaultSSLCertificate is "namespace/name" of a kubernetes.io/tls
	// Secret served for unknown SNI names and for TLS hosts without a valid
	// certificate, or "" to use FallbackCertificate.
	DefaultSSLCertificate string
	// FallbackCertificate is the self-signed certificate generated at
	// start; used when DefaultSSLCertificate is unset or invalid, under the
	// name FallbackCertificateName. Build does not modify it. When nil and
	// no default certificate is valid, Configuration.DefaultCertificate is
	// "".
	FallbackCertificate *config.Certificate
	// ConfigMap is "namespace/name" of the controller ConfigMap holding the
	// Global settings, or "" for the defaults.
	ConfigMap string
	// AllowSnippets is ingress-nginx's allow-snippet-annotations, accepted
	// so that its deployments start; it changes nothing: an Ingress with a
	// snippet is never served (see snippet.go).
	AllowSnippets bool
	// MaxUpstreamTLSProfiles bounds the distinct backend TLS profiles
	// (Configuration.UpstreamTLS; 0: DefaultMaxUpstreamTLSProfiles); the
	// routes of an Ingress beyond it answer 503.
	MaxUpstreamTLSProfiles int
	// TCPServicesConfigMap and UDPServicesConfigMap are "namespace/name"
	// of ingress-nginx's --tcp-services-configmap and
	// --udp-services-configmap, or "" for none (see streams.go).
	TCPServicesConfigMap string
	UDPServicesConfigMap string
	// ReservedPorts are the ports nginx already listens on (HTTP, HTTPS,
	// status): a TCP or UDP service on one is left out with a Problem.
	ReservedPorts []int
	// EnableSSLPassthrough is --enable-ssl-passthrough: without it the
	// ssl-passthrough annotation is left out with a Problem.
	EnableSSLPassthrough bool
}

// classes are the class flags of o, as sources take them.
func (o Options) classes() intent.Classes {
	return intent.Classes{Controller: o.ControllerClass, Class: o.IngressClass, WithoutClass: o.WatchIngressWithoutClass}
}

// Validate reports every malformed option, each wrapping ErrInvalidOption.
func (o Options) Validate() error {
	var errs []error
	if o.ControllerClass == "" {
		errs = append(errs, fmt.Errorf("%w: controller class is empty", ErrInvalidOption))
	} else if !validControllerName(o.ControllerClass) {
		errs = append(errs, fmt.Errorf("%w: controller class %q is not a domain-prefixed path", ErrInvalidOption, o.ControllerClass))
	}
	if o.IngressClass != "" && !intent.IsDNSLabel(o.IngressClass) && !intent.IsDNSSubdomain(o.IngressClass) {
		errs = append(errs, fmt.Errorf("%w: ingress class %q is not a DNS name", ErrInvalidOption, o.IngressClass))
	}
	for _, kv := range [...]struct{ flag, value string }{
		{"default backend service", o.DefaultBackendService},
		{"default SSL certificate", o.DefaultSSLCertificate},
		{"config map", o.ConfigMap},
		{"TCP services config map", o.TCPServicesConfigMap},
		{"UDP services config map", o.UDPServicesConfigMap},
	} {
		if kv.value == "" {
			continue
		}
		if _, err := intent.ParseKey(kv.value); err != nil {
			errs = append(errs, fmt.Errorf("%w: %s: %w", ErrInvalidOption, kv.flag, err))
		}
	}
	if o.MaxUpstreamTLSProfiles < 0 || o.MaxUpstreamTLSProfiles > config.MaxUpstreamTLSProfilesLimit {
		errs = append(errs, fmt.Errorf("%w: max upstream TLS profiles %d is not 1 to %d", ErrInvalidOption, o.MaxUpstreamTLSProfiles, config.MaxUpstreamTLSProfilesLimit))
	}
	if c := o.FallbackCertificate; c != nil && (len(c.Cert) == 0 || len(c.Key) == 0) {
		errs = append(errs, fmt.Errorf("%w: fallback certificate has no certificate or key", ErrInvalidOption))
	}
	return errors.Join(errs...)
}

// validControllerName accepts "domain/path" as IngressClass spec.controller.
func validControllerName(s string) bool {
	domain, path, ok := strings.Cut(s, "/")
	if !ok || path == "" || !intent.IsDNSSubdomain(domain) {
		return false
	}
	for i := 0; i < len(path); i++ {
		c := path[i]
		if !intent.IsAlnum(c) && c != '-' && c != '_' && c != '.' && c != '/' {
			return false
		}
	}
	return true
}
