package main

import (
	"flag"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/nginx"
)

// resolvConf is where the default resolvers of auth URLs come from.
const resolvConf = "/etc/resolv.conf"

// registerAuthFlags registers the flags of external auth (auth-url): the
// auth cache's shared dict, the auth request's timeout and the resolvers
// of auth URLs' host names (nginx.conf directives, none from the cluster).
func registerAuthFlags(fs *flag.FlagSet, o *nginx.Options) {
	o.AuthCacheDictSize = nginx.DefaultAuthCacheDictSize
	fs.Var(sizeFlag{&o.AuthCacheDictSize}, "auth-cache-dict-size",
		"shared memory for the external auth cache (auth-cache-key), an nginx `size`")
	fs.DurationVar(&o.AuthTimeout, "auth-timeout", nginx.DefaultAuthTimeout,
		"bound of each external auth request (auth-url): send and read; connect at most 5s of it")
	o.Resolvers = nginx.DefaultResolvers(resolvConf)
	fs.Func("resolver", "nameservers (IP addresses with optional ports, separated by commas) that resolve the host names of auth URLs; default: those of "+resolvConf,
		func(v string) error {
			o.Resolvers = nil
			for _, r := range strings.Split(v, ",") {
				if r = strings.TrimSpace(r); r != "" {
					o.Resolvers = append(o.Resolvers, r)
				}
			}
			return nil
		})
}
