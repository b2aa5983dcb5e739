// Package deploy renders and checks the manifests in deploy/: the kustomize
// base and its overlays, and the examples.
//
// Render is a small, strict renderer for exactly the kustomize features that
// deploy/ uses (resources, namespace, images and strategic-merge patches);
// a kustomization.yaml with any other field is an error, never silently
// ignored. The tests apply every rendered object to a real kube-apiserver
// with server-side dry-run and strict field validation, check the security
// invariants of the objects, load the NATS configuration from its ConfigMap
// into real nats-servers to verify the users' permissions, and run a 3-node
// JetStream cluster through a leader failure.
package deploy
