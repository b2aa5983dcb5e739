#!/usr/bin/env bash
# make run: the whole system on this machine (see test/testkit/demo). Needs root
# for its private network namespace; the Makefile has built bin/ already.
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o bin/demo ./hack/demo
exec bin/demo "$@"
