# ingress-sync. Quick start on a fresh machine: `make run` and `make test`.
# Everything the tests need is installed or built here: the Debian nginx+Lua
# packages (as root), kube-apiserver and etcd from the Go module proxy, natscli
# and helm.

SHELL        := /bin/bash
GO           ?= go
CACHE        := $(CURDIR)/.cache
CONTROLPLANE := $(CACHE)/controlplane
TOOLS        := $(CACHE)/bin
BIN          := $(CURDIR)/bin
NATSCLI      := $(TOOLS)/nats
HELM         := $(TOOLS)/helm
TEST_TIMEOUT ?= 40m
GOTESTFLAGS  ?=

export INGRESS_SYNC_CONTROLPLANE_DIR := $(CONTROLPLANE)
export INGRESS_SYNC_HELM := $(HELM)
export PATH := $(TOOLS):$(PATH)

.PHONY: all build test unit e2e bench faults run lint vet fmt deps nginx-deps controlplane natscli helm image image-deps image-base clean

all: build

## build: the watcher, syncer and churn binaries into bin/
build:
	$(GO) build -o $(BIN)/ ./cmd/...

## deps: everything the tests need that is not Go code
deps: nginx-deps controlplane natscli helm

nginx-deps:
	hack/install-nginx.sh

## controlplane: kube-apiserver v1.37.2 + etcd v3.7.0 from the module proxy, cached in .cache/
controlplane: $(CONTROLPLANE)/kube-apiserver $(CONTROLPLANE)/etcd

$(CONTROLPLANE)/kube-apiserver $(CONTROLPLANE)/etcd: hack/controlplane/build.sh hack/controlplane/apiserver/go.mod hack/controlplane/etcd/go.mod
	hack/controlplane/build.sh $(CONTROLPLANE)

## natscli: the nats CLI for `nats stream view`, in .cache/bin
natscli: $(NATSCLI)

$(NATSCLI):
	GOBIN=$(TOOLS) $(GO) install github.com/nats-io/natscli/nats@v0.5.0

## helm: helm v4.3.1 from the Go module proxy, in .cache/bin, for the chart
## tests (deploy/helm); rebuilt only when missing or of another version
helm:
	hack/helm/build.sh $(TOOLS)

## test: every test, against the real nats-server, kube-apiserver and nginx
test: deps build vet
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(GOTESTFLAGS) ./...

## unit: the fast tests only (no control plane, no nginx)
unit:
	$(GO) test -count=1 -short ./...

## bench: Go benchmarks and the churn scenario; writes BENCHMARKS.md
bench: deps build
	hack/bench.sh

## faults: the fault suite, every fault once under churn (about 10 minutes); writes RELIABILITY.md
faults: deps build
	FAULTS=full FAULTS_REPORT=$(CURDIR)/RELIABILITY.md $(GO) test -count=1 -timeout 60m $(GOTESTFLAGS) -v ./test/faults

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

## image-deps: podman, buildah, runc, debootstrap (Debian packages, as root)
## when no Docker daemon answers
image-deps:
	@if command -v docker >/dev/null && timeout 10 docker info >/dev/null 2>&1; then :; else hack/image/deps.sh; fi

## image-base: the Debian base image made with debootstrap (cached in
## $(INGRESS_SYNC_CACHE)/image)
image-base: image-deps
	hack/image/base.sh

clean:
	rm -rf $(BIN)
