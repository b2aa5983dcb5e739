# ingress-sync. Quick start on a fresh machine: `make run` and `make test`.
# Everything the tests need is installed or built here: the Debian nginx+Lua
# packages (as root), kube-apiserver and etcd from the Go module proxy, natscli
# and helm.

SHELL        := /bin/bash
GO           ?= go
BIN          := $(CURDIR)/bin
TEST_TIMEOUT ?= 40m
GOTESTFLAGS  ?=

# What is built once per machine and shared by every clone (README, "Caches"):
# kube-apiserver and etcd, natscli, helm, and the image's Debian base. Each
# lives in a folder named after what it was built from, so clones at other
# versions do not take each other's. An empty or missing folder is filled.
INGRESS_SYNC_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/ingress-sync
CONTROLPLANE_KEY   := $(shell cat hack/controlplane/build.sh hack/controlplane/apiserver/go.mod hack/controlplane/apiserver/go.sum \
                        hack/controlplane/etcd/go.mod hack/controlplane/etcd/go.sum | sha256sum | cut -c1-16)
CONTROLPLANE       := $(INGRESS_SYNC_CACHE)/controlplane/$(CONTROLPLANE_KEY)
NATSCLI_VERSION    := v0.5.0
NATSCLI            := $(INGRESS_SYNC_CACHE)/natscli/$(NATSCLI_VERSION)/nats
HELM_VERSION       := $(shell sed -n 's/^helm_version=//p' hack/helm/build.sh)
HELM               := $(INGRESS_SYNC_CACHE)/helm/$(HELM_VERSION)/helm

export INGRESS_SYNC_CACHE
export INGRESS_SYNC_CONTROLPLANE_DIR := $(CONTROLPLANE)
export INGRESS_SYNC_HELM := $(HELM)
# The image make image builds and test/image runs (podman's name for it).
IMAGE              ?= ingress-sync:dev
export IMAGE
export INGRESS_SYNC_IMAGE := $(if $(findstring /,$(firstword $(subst :, ,$(IMAGE)))),$(IMAGE),localhost/$(IMAGE))
export PATH := $(dir $(NATSCLI)):$(dir $(HELM)):$(PATH)

.PHONY: all build test unit e2e bench faults conformance conformance-deps run lint vet fmt deps nginx-deps controlplane natscli helm cache-links image image-deps image-base image-test clean

all: build

## build: the watcher and syncer binaries (cmd/), and churn (hack/churn), into bin/
build:
	$(GO) build -o $(BIN)/ ./cmd/... ./hack/churn

## deps: everything the tests need that is not Go code
deps: nginx-deps controlplane natscli helm cache-links

nginx-deps:
	hack/install-nginx.sh

## controlplane: kube-apiserver v1.37.2 + etcd v3.7.0 from the module proxy,
## built once into $(INGRESS_SYNC_CACHE)/controlplane/<hash of hack/controlplane>
controlplane:
	hack/controlplane/build.sh $(CONTROLPLANE)

## natscli: the nats CLI for `nats stream view`, in $(INGRESS_SYNC_CACHE)/natscli
natscli: $(NATSCLI)

$(NATSCLI):
	GOBIN=$(dir $(NATSCLI)) $(GO) install github.com/nats-io/natscli/nats@$(NATSCLI_VERSION)

## helm: helm from the Go module proxy, in $(INGRESS_SYNC_CACHE)/helm, for the
## chart tests (deploy/helm); rebuilt only when missing or of another version
helm:
	hack/helm/build.sh $(dir $(HELM))

## cache-links: .cache/controlplane, .cache/bin/nats and .cache/bin/helm name
## the shared ones, for `go test` and the nats CLI run without make (an
## existing folder or file of an older clone is left alone)
cache-links: controlplane natscli helm
	@mkdir -p .cache/bin
	@for l in "$(CONTROLPLANE) .cache/controlplane" "$(NATSCLI) .cache/bin/nats" "$(HELM) .cache/bin/helm"; do \
	  set -- $$l; if [ -L "$$2" ] || [ ! -e "$$2" ]; then ln -sfn "$$1" "$$2"; fi; \
	done

## test: every test, against the real nats-server, kube-apiserver and nginx,
## and the image (make image first; test/image runs it with podman); then
## the harness's tests and the Gateway API conformance suite, GATEWAY-HTTP
## and GATEWAY-GRPC with the features the GatewayClass lists (about 2 minutes; its report goes
## to .cache/, the committed one is make conformance's)
test: deps build vet image conformance-deps
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(GOTESTFLAGS) ./...
	INGRESS_SYNC_CONFORMANCE=1 $(GO) test -count=1 -timeout 5m $(GOTESTFLAGS) ./test/conformance/harness
	$(call conformance_suite,$(CURDIR)/.cache/conformance-report.yaml,)

## image-test: the image test alone (test/image), after make image
image-test: deps image
	$(GO) test -count=1 -timeout 10m $(GOTESTFLAGS) -v ./test/image

## unit: the fast tests only (no control plane, no nginx)
unit:
	$(GO) test -count=1 -short ./...

## bench: Go benchmarks and the churn scenario; writes BENCHMARKS.md
bench: deps build image
	hack/bench.sh

## faults: the fault suite, every fault once under churn (about 10 minutes), asserting the failover and recovery bounds (a change served within 5 s after a kube-apiserver outage and after the stream is recreated); writes RELIABILITY.md
faults: deps build
	FAULTS=full FAULTS_REPORT=$(CURDIR)/RELIABILITY.md $(GO) test -count=1 -timeout 60m $(GOTESTFLAGS) -v ./test/faults

## conformance: the official Gateway API conformance suite (module
## sigs.k8s.io/gateway-api/conformance, profiles CONFORMANCE_PROFILES) against the
## whole system on the test harness (test/conformance), as root; the tests
## are bounded by CONFORMANCE_TIMEOUT, the whole command (with its build) by
## CONFORMANCE_HARD_TIMEOUT; writes CONFORMANCE_REPORT. The harness's own tests
## run first. Supported features come from the GatewayClass status unless
## CONFORMANCE_FLAGS says (e.g. --supported-features=...); docs/gateway-api.md
CONFORMANCE_TIMEOUT ?= 30m
CONFORMANCE_HARD_TIMEOUT ?= 45m
CONFORMANCE_REPORT  ?= $(CURDIR)/conformance/reports/gateway-http-report.yaml
CONFORMANCE_FLAGS   ?=
CONFORMANCE_PROFILES ?= GATEWAY-HTTP,GATEWAY-GRPC
conformance: deps build conformance-deps
	$(GO) vet -tags conformance ./test/conformance/...
	INGRESS_SYNC_CONFORMANCE=1 $(GO) test -count=1 -timeout 5m $(GOTESTFLAGS) ./test/conformance/harness
	$(call conformance_suite,$(CONFORMANCE_REPORT),$(CONFORMANCE_FLAGS))

# conformance_suite runs the suite, writing the report to $(1), with the
# suite flags $(2).
define conformance_suite
INGRESS_SYNC_CONFORMANCE=1 timeout -k 1m $(CONFORMANCE_HARD_TIMEOUT) $(GO) test -tags conformance -count=1 -timeout $(CONFORMANCE_TIMEOUT) $(GOTESTFLAGS) -v ./test/conformance \
  -args --gateway-class=ingress-sync --conformance-profiles=$(CONFORMANCE_PROFILES) --report-output=$(1) \
  --organization=ingress-sync --project=ingress-sync --url=https://github.com/ingress-sync/ingress-sync \
  --version=$$(git describe --tags --always --dirty) --contact=https://github.com/ingress-sync/ingress-sync/issues \
  $(2)
endef

## conformance-deps: iptables (Debian, as root, when missing): the harness's
## kube-proxy rules in the test's network namespace
conformance-deps:
	@command -v iptables-restore >/dev/null || { apt-get update && apt-get install -y iptables; }

## run: the whole system on this machine (control plane, NATS, watcher, syncer + nginx, demo backends)
run: deps build
	hack/run.sh

vet:
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

## lint: gofmt, go vet and go mod tidy must leave nothing to change
lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@$(GO) mod tidy -diff >/dev/null || { echo "go.mod/go.sum not tidy: run go mod tidy"; exit 1; }

## image: the container image ingress-sync:dev from deploy/Dockerfile, with
## a Docker daemon or, without one, podman (a Debian base made with
## debootstrap, this machine's Go); docs/deploy.md
image: image-deps
	hack/image/build.sh

## image-deps: podman, buildah, runc, catatonit, debootstrap (Debian
## packages, as root, when missing): make image without a Docker daemon, and
## test/image, which runs the image with podman either way
image-deps:
	hack/image/deps.sh

## image-base: the Debian base image made with debootstrap (cached in
## $(INGRESS_SYNC_CACHE)/image)
image-base: image-deps
	hack/image/base.sh

clean:
	rm -rf $(BIN)
