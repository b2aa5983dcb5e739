// Command demo is `make run`: the whole ingress-sync system on this machine.
// See test/testkit/demo.
package main

import (
	"os"

	"github.com/ingress-sync/ingress-sync/test/testkit/demo"
)

func main() {
	os.Exit(demo.Main(os.Args[1:], os.Stdout, os.Stderr))
}
