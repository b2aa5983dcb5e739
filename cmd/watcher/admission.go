package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/ingress-sync/ingress-sync/internal/group"
	"github.com/ingress-sync/ingress-sync/pkg/admission"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"k8s.io/client-go/kubernetes"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// admissionFlags are the flags of the validating admission webhook.
type admissionFlags struct {
	addr, certFile, keyFile string
}

// check requires both files when the webhook is on.
func (a admissionFlags) check() error {
	if a.addr == "" {
		return nil
	}
	if a.certFile == "" || a.keyFile == "" {
		return fmt.Errorf("--admission-addr needs --admission-cert-file and --admission-key-file")
	}
	return nil
}

// admissionPart is the webhook of --admission-addr: the Ingresses of our
// classes, checked against the cluster's IngressClasses and Ingresses from
// informers of its own (admission.Cache; the webhook serves once they have
// synced), and the HTTPRoutes that routeOurs says attach to our Gateways
// (the watcher's caches). ok is false when it is off.
func (f *flags) admissionPart(client kubernetes.Interface, routeOurs func(*gatewayv1.HTTPRoute) bool, log *slog.Logger) (group.Part, bool, error) {
	if f.admission.addr == "" {
		return group.Part{}, false, nil
	}
	c, err := admission.NewCache(client, f.watchNamespace)
	if err != nil {
		return group.Part{}, false, err
	}
	srv := &admission.Server{Addr: f.admission.addr, CertFile: f.admission.certFile, KeyFile: f.admission.keyFile, Logger: log,
		Handler: admission.NewHandler(admission.Options{Logger: log, IngressClasses: c.IngressClasses, Neighbours: c.Neighbours, RouteOurs: routeOurs,
			Classes: intent.Classes{Controller: f.controllerClass, Class: f.ingressClass, WithoutClass: f.withoutClass}})}
	return group.Part{Name: "admission", Start: func(ctx context.Context) error {
		if _, err := srv.Listen(); err != nil {
			return err
		}
		defer c.Shutdown()
		if err := c.Start(ctx); err != nil {
			return err
		}
		return srv.Start(ctx)
	}}, true, nil
}
