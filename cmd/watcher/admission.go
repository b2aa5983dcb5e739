package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/ingress-sync/ingress-sync/internal/group"
	"github.com/ingress-sync/ingress-sync/pkg/admission"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
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
// classes, with the cluster's IngressClasses from an informer of its own
// (the webhook serves once it has synced). ok is false when it is off.
func (f *flags) admissionPart(client kubernetes.Interface, log *slog.Logger) (group.Part, bool) {
	if f.admission.addr == "" {
		return group.Part{}, false
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	classes := factory.Networking().V1().IngressClasses()
	informer, lister := classes.Informer(), classes.Lister()
	byName := func() map[string]*networkingv1.IngressClass {
		list, _ := lister.List(labels.Everything()) // a lister's List never fails
		m := make(map[string]*networkingv1.IngressClass, len(list))
		for _, c := range list {
			m[c.Name] = c
		}
		return m
	}
	srv := &admission.Server{Addr: f.admission.addr, CertFile: f.admission.certFile, KeyFile: f.admission.keyFile, Logger: log,
		Handler: admission.NewHandler(admission.Options{Logger: log, IngressClasses: byName,
			Classes: intent.Classes{Controller: f.controllerClass, Class: f.ingressClass, WithoutClass: f.withoutClass}})}
	return group.Part{Name: "admission", Start: func(ctx context.Context) error {
		if _, err := srv.Listen(); err != nil {
			return err
		}
		factory.Start(ctx.Done())
		defer factory.Shutdown()
		if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
			return ctx.Err()
		}
		return srv.Start(ctx)
	}}, true
}
