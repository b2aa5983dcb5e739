package ingress

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// Request mirroring (mirror-target, mirror-host, mirror-request-body): a
// copy of every request of the Ingress's paths goes to mirror-target, in
// the background (lua/mirror.lua), its answer discarded:
//
//   - mirror-target: an http:// or https:// URL; its host and port are
//     fixed, its path and query may hold the variables auth-url takes
//     (intent.ParseMirrorURL), $request_uri or $uri right after the host
//     included ("https://test.example.com$request_uri"); without a path the
//     copy has the request's URI.
//   - mirror-host: the Host header of the copies (a host name with an
//     optional port); by default the target's host.
//   - mirror-request-body: "off" sends the copies without the body; "on"
//     (the default) with it.
//
// A value that cannot be applied is a Problem and leaves the mirror out:
// the Ingress is served as it would be without mirror annotations.

// mirrorInput is what the mirror-* annotations of one Ingress say.
type mirrorInput struct {
	target, host string
	bodyOff, bad bool
	others       []string
}

var errMirrorBody = errors.New("must be on or off")

// parseMirrorAnnotation parses one mirror-* annotation into st.
func parseMirrorAnnotation(_ *intent.Settings, st *parseState, name, v string) error {
	in := &st.mirror
	var err error
	if name != "mirror-target" { // ParseMirrorURL is an allow-list of its own (${name} has braces)
		err = checkForbidden(v, false)
	}
	if err == nil {
		switch name {
		case "mirror-target":
			if _, err = intent.ParseMirrorURL(v); err == nil {
				in.target = v
			}
		case "mirror-host":
			in.host, err = intent.ParseUpstreamVhost(v)
			in.others = append(in.others, name)
		case "mirror-request-body":
			in.bodyOff, err = v == "off", nil
			if v != "on" && v != "off" {
				err = errMirrorBody
			}
			in.others = append(in.others, name)
		default:
			return errUnsupported
		}
	}
	in.bad = in.bad || err != nil
	return err
}

// finishMirror sets the Ingress's mirror from what its annotations say.
func finishMirror(a *intent.Settings, in *mirrorInput) {
	switch {
	case in.target == "" && len(in.others) > 0 && !in.bad:
		a.Problems = append(a.Problems, fmt.Sprintf("annotations %s%s without %smirror-target: ignored", AnnotationPrefix,
			strings.Join(in.others, ", "+AnnotationPrefix), AnnotationPrefix))
	case in.bad && in.target != "":
		a.Problems = append(a.Problems, fmt.Sprintf("annotation %smirror-target: no mirror, as a mirror annotation is invalid", AnnotationPrefix))
	case in.target == "" || in.bad:
	default:
		a.Mirror = &config.Mirror{URL: in.target, Host: in.host, Body: !in.bodyOff, Numerator: 1, Denominator: 1}
	}
}
