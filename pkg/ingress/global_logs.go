package ingress

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"errors"
	"fmt"
	"regexp"
	"strings"
)

// accessLogPathRe is an absolute path of plain names: letters, digits,
// '.', '_' and '-' between slashes. Nothing nginx would read as syntax
// (space, ';', quotes, '$', '{') gets through.
var accessLogPathRe = regexp.MustCompile(`^(/[A-Za-z0-9._-]+)+$`)

// parseAccessLogPath parses access-log-path: AccessLogStdout (and
// ingress-nginx's default /var/log/nginx/access.log, which is stdout in
// its image) is stored as "" (the default), AccessLogStderr as itself, and
// any other value must be an absolute file path of plain names, outside
// /dev, /proc and /sys, without "." or ".." elements. syslog: and other
// nginx destinations are refused.
func parseAccessLogPath(v string) (string, error) {
	switch v {
	case config.AccessLogStdout, ingressNginxAccessLog:
		return "", nil
	case config.AccessLogStderr:
		return v, nil
	}
	switch {
	case len(v) > maxAccessLogPathLen:
		return "", fmt.Errorf("longer than %d characters", maxAccessLogPathLen)
	case !accessLogPathRe.MatchString(v):
		return "", errors.New("must be /dev/stdout, /dev/stderr or an absolute path of letters, digits, '.', '_', '-' and '/'")
	}
	for _, seg := range strings.Split(v[1:], "/") {
		if seg == "." || seg == ".." {
			return "", errors.New(`must not contain "." or ".." elements`)
		}
	}
	for _, dir := range []string{"/dev/", "/proc/", "/sys/"} {
		if strings.HasPrefix(v, dir) {
			return "", fmt.Errorf("must not be under %s (only /dev/stdout and /dev/stderr are)", dir)
		}
	}
	return v, nil
}

const (
	// ingressNginxAccessLog is ingress-nginx's default access-log-path, a
	// symlink to /dev/stdout in its image.
	ingressNginxAccessLog = "/var/log/nginx/access.log"
	maxAccessLogPathLen   = 256
)
