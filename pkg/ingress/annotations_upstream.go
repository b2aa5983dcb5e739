package ingress

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// The upstream and header annotations and ConfigMap keys, as ingress-nginx
// v1.15 reads them:
//
//   - upstream-vhost: the Host header sent to the backend (a host name,
//     optionally with a port); Location.Settings.UpstreamVhost.
//   - connection-proxy-header: the Connection header sent to the backend,
//     "close" or "keep-alive"; Location.Settings.ConnectionHeader.
//   - server-alias: comma-separated extra names of the Ingress's hosts,
//     served by the same routes (see appendAliases).
//   - service-upstream (and the ConfigMap key of the same name, its
//     default): the backend's one endpoint is the Service's ClusterIP and
//     port (see serviceUpstream).
//   - custom-headers: "namespace/name" of a ConfigMap in the Ingress's
//     namespace whose data are response headers of the Ingress's routes;
//     only names listed in the ConfigMap key global-allowed-response-headers
//     are sent, as in ingress-nginx.
//   - ConfigMap keys proxy-set-headers and add-headers: "namespace/name" of
//     ConfigMaps whose data are request headers for every backend and
//     response headers for every response (Server.RequestHeaders and
//     Server.ResponseHeaders).
//
// Header values never reach nginx.conf: they are route data that
// lua/router.lua and lua/headers.lua apply.

// applyUpstream parses the upstream and header annotations; ok is false
// when name is none of them.
func applyUpstream(a *intent.Settings, name, v string) (ok bool, err error) {
	u := &a.Upstream
	switch name {
	case "upstream-vhost":
		a.Location.UpstreamVhost, err = intent.ParseUpstreamVhost(v)
	case "connection-proxy-header":
		a.Location.ConnectionHeader, err = parseConnectionHeader(v)
	case "server-alias":
		var bad []string
		u.Aliases, bad = parseAliases(v)
		if bad != nil {
			a.Problems = append(a.Problems, fmt.Sprintf("annotation %sserver-alias: names %q are not DNS names or one-label wildcards (*.example.com); left out", AnnotationPrefix, bad))
		}
	case "service-upstream":
		u.ServiceUpstream, err = parseBoolPtr(v)
	case "custom-headers":
		_, err = intent.ParseKey(v)
		if err == nil {
			u.CustomHeaders = v
		}
	default:
		return false, nil
	}
	return true, err
}

// parseConnectionHeader accepts what ingress-nginx accepts: close or
// keep-alive.
func parseConnectionHeader(v string) (string, error) {
	if v == "close" || v == "keep-alive" {
		return v, nil
	}
	return "", errors.New("must be close or keep-alive")
}

// parseAliases splits server-alias: trimmed, empty entries skipped, sorted
// and unique, as ingress-nginx. Names that are not hosts of the Ingress v1
// form (regexes, trailing wildcards) are returned in bad.
func parseAliases(v string) (aliases, bad []string) {
	for _, s := range strings.Split(v, ",") {
		s = strings.ToLower(strings.TrimSpace(s))
		switch {
		case s == "":
		case intent.ValidHost(s) != nil || len(aliases) >= intent.MaxAliases:
			bad = append(bad, s)
		default:
			aliases = append(aliases, s)
		}
	}
	slices.Sort(aliases)
	return slices.Compact(aliases), bad
}

// parseConfigMapRef accepts a "namespace/name" ConfigMap reference.
func parseConfigMapRef(v string) (string, error) {
	if _, err := intent.ParseKey(v); err != nil {
		return "", err
	}
	return v, nil
}

// parseAllowedHeaders parses global-allowed-response-headers: header names
// separated by commas, returned lower-cased, sorted and joined by ",".
func parseAllowedHeaders(v string) (string, error) {
	var names []string
	for _, n := range strings.Split(v, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if !intent.ValidHeaderName(n) {
			return "", fmt.Errorf("%q is not a header name", n)
		}
		names = append(names, strings.ToLower(n))
	}
	if len(names) > intent.MaxListItems {
		return "", fmt.Errorf("more than %d names", intent.MaxListItems)
	}
	slices.Sort(names)
	return strings.Join(slices.Compact(names), ","), nil
}
