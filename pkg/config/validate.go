package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

func toSet(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// opensslCiphers are the names an ssl-ciphers list must use at least once
// in an element that adds ciphers: the TLS 1.2 cipher suites of Debian's
// OpenSSL 3.0 and its aliases that match at least one of them. nginx -t
// fails on a list that matches no cipher, and a reload it refuses holds
// back every later change; unknown names beside a known one are ignored by
// OpenSSL, as are the elements that remove ciphers.
var opensslCiphers = toSet(
	// Aliases.
	"DEFAULT", "COMPLEMENTOFDEFAULT", "ALL", "COMPLEMENTOFALL", "HIGH", "eNULL", "NULL", "aNULL", "kRSA",
	"aRSA", "RSA", "kDHE", "kEDH", "DH", "DHE", "EDH", "ADH", "kEECDH", "kECDHE", "ECDH", "ECDHE", "EECDH",
	"AECDH", "aDSS", "DSS", "aECDSA", "ECDSA", "TLSv1.2", "TLSv1.0", "TLSv1", "SSLv3", "AES128", "AES256",
	"AES", "AESGCM", "AESCCM", "AESCCM8", "ARIA128", "ARIA256", "ARIA", "CAMELLIA128", "CAMELLIA256",
	"CAMELLIA", "CHACHA20", "MD5", "SHA1", "SHA", "SHA256", "SHA384", "PSK", "kPSK", "kECDHEPSK", "kDHEPSK",
	"kRSAPSK", "aPSK", "SUITEB128", "SUITEB128ONLY", "SUITEB192", "kSRP", "aSRP", "SRP", "CBC",
	// Cipher suites.
	"ADH-AES128-GCM-SHA256", "ADH-AES128-SHA", "ADH-AES128-SHA256", "ADH-AES256-GCM-SHA384", "ADH-AES256-SHA",
	"ADH-AES256-SHA256", "ADH-CAMELLIA128-SHA", "ADH-CAMELLIA128-SHA256", "ADH-CAMELLIA256-SHA",
	"ADH-CAMELLIA256-SHA256", "AECDH-AES128-SHA", "AECDH-AES256-SHA", "AECDH-NULL-SHA", "AES128-CCM",
	"AES128-CCM8", "AES128-GCM-SHA256", "AES128-SHA", "AES128-SHA256", "AES256-CCM", "AES256-CCM8",
	"AES256-GCM-SHA384", "AES256-SHA", "AES256-SHA256", "ARIA128-GCM-SHA256", "ARIA256-GCM-SHA384",
	"CAMELLIA128-SHA", "CAMELLIA128-SHA256", "CAMELLIA256-SHA", "CAMELLIA256-SHA256",
	"DHE-DSS-AES128-GCM-SHA256", "DHE-DSS-AES128-SHA", "DHE-DSS-AES128-SHA256", "DHE-DSS-AES256-GCM-SHA384",
	"DHE-DSS-AES256-SHA", "DHE-DSS-AES256-SHA256", "DHE-DSS-ARIA128-GCM-SHA256", "DHE-DSS-ARIA256-GCM-SHA384",
	"DHE-DSS-CAMELLIA128-SHA", "DHE-DSS-CAMELLIA128-SHA256", "DHE-DSS-CAMELLIA256-SHA",
	"DHE-DSS-CAMELLIA256-SHA256", "DHE-PSK-AES128-CBC-SHA", "DHE-PSK-AES128-CBC-SHA256", "DHE-PSK-AES128-CCM",
	"DHE-PSK-AES128-CCM8", "DHE-PSK-AES128-GCM-SHA256", "DHE-PSK-AES256-CBC-SHA", "DHE-PSK-AES256-CBC-SHA384",
	"DHE-PSK-AES256-CCM", "DHE-PSK-AES256-CCM8", "DHE-PSK-AES256-GCM-SHA384", "DHE-PSK-ARIA128-GCM-SHA256",
	"DHE-PSK-ARIA256-GCM-SHA384", "DHE-PSK-CAMELLIA128-SHA256", "DHE-PSK-CAMELLIA256-SHA384",
	"DHE-PSK-CHACHA20-POLY1305", "DHE-PSK-NULL-SHA", "DHE-PSK-NULL-SHA256", "DHE-PSK-NULL-SHA384",
	"DHE-RSA-AES128-CCM", "DHE-RSA-AES128-CCM8", "DHE-RSA-AES128-GCM-SHA256", "DHE-RSA-AES128-SHA",
	"DHE-RSA-AES128-SHA256", "DHE-RSA-AES256-CCM", "DHE-RSA-AES256-CCM8", "DHE-RSA-AES256-GCM-SHA384",
	"DHE-RSA-AES256-SHA", "DHE-RSA-AES256-SHA256", "DHE-RSA-ARIA128-GCM-SHA256", "DHE-RSA-ARIA256-GCM-SHA384",
	"DHE-RSA-CAMELLIA128-SHA", "DHE-RSA-CAMELLIA128-SHA256", "DHE-RSA-CAMELLIA256-SHA",
	"DHE-RSA-CAMELLIA256-SHA256", "DHE-RSA-CHACHA20-POLY1305", "ECDHE-ARIA128-GCM-SHA256",
	"ECDHE-ARIA256-GCM-SHA384", "ECDHE-ECDSA-AES128-CCM", "ECDHE-ECDSA-AES128-CCM8",
	"ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES128-SHA256",
	"ECDHE-ECDSA-AES256-CCM", "ECDHE-ECDSA-AES256-CCM8", "ECDHE-ECDSA-AES256-GCM-SHA384",
	"ECDHE-ECDSA-AES256-SHA", "ECDHE-ECDSA-AES256-SHA384", "ECDHE-ECDSA-ARIA128-GCM-SHA256",
	"ECDHE-ECDSA-ARIA256-GCM-SHA384", "ECDHE-ECDSA-CAMELLIA128-SHA256", "ECDHE-ECDSA-CAMELLIA256-SHA384",
	"ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-ECDSA-NULL-SHA", "ECDHE-PSK-AES128-CBC-SHA",
	"ECDHE-PSK-AES128-CBC-SHA256", "ECDHE-PSK-AES256-CBC-SHA", "ECDHE-PSK-AES256-CBC-SHA384",
	"ECDHE-PSK-CAMELLIA128-SHA256", "ECDHE-PSK-CAMELLIA256-SHA384", "ECDHE-PSK-CHACHA20-POLY1305",
	"ECDHE-PSK-NULL-SHA", "ECDHE-PSK-NULL-SHA256", "ECDHE-PSK-NULL-SHA384", "ECDHE-RSA-AES128-GCM-SHA256",
	"ECDHE-RSA-AES128-SHA", "ECDHE-RSA-AES128-SHA256", "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-SHA",
	"ECDHE-RSA-AES256-SHA384", "ECDHE-RSA-CAMELLIA128-SHA256", "ECDHE-RSA-CAMELLIA256-SHA384",
	"ECDHE-RSA-CHACHA20-POLY1305", "ECDHE-RSA-NULL-SHA", "NULL-MD5", "NULL-SHA", "NULL-SHA256",
	"PSK-AES128-CBC-SHA", "PSK-AES128-CBC-SHA256", "PSK-AES128-CCM", "PSK-AES128-CCM8", "PSK-AES128-GCM-SHA256",
	"PSK-AES256-CBC-SHA", "PSK-AES256-CBC-SHA384", "PSK-AES256-CCM", "PSK-AES256-CCM8", "PSK-AES256-GCM-SHA384",
	"PSK-ARIA128-GCM-SHA256", "PSK-ARIA256-GCM-SHA384", "PSK-CAMELLIA128-SHA256", "PSK-CAMELLIA256-SHA384",
	"PSK-CHACHA20-POLY1305", "PSK-NULL-SHA", "PSK-NULL-SHA256", "PSK-NULL-SHA384", "RSA-PSK-AES128-CBC-SHA",
	"RSA-PSK-AES128-CBC-SHA256", "RSA-PSK-AES128-GCM-SHA256", "RSA-PSK-AES256-CBC-SHA",
	"RSA-PSK-AES256-CBC-SHA384", "RSA-PSK-AES256-GCM-SHA384", "RSA-PSK-ARIA128-GCM-SHA256",
	"RSA-PSK-ARIA256-GCM-SHA384", "RSA-PSK-CAMELLIA128-SHA256", "RSA-PSK-CAMELLIA256-SHA384",
	"RSA-PSK-CHACHA20-POLY1305", "RSA-PSK-NULL-SHA", "RSA-PSK-NULL-SHA256", "RSA-PSK-NULL-SHA384",
	"SRP-AES-128-CBC-SHA", "SRP-AES-256-CBC-SHA", "SRP-DSS-AES-128-CBC-SHA", "SRP-DSS-AES-256-CBC-SHA",
	"SRP-RSA-AES-128-CBC-SHA", "SRP-RSA-AES-256-CBC-SHA",
)

// SSLCipherNames returns, sorted, the OpenSSL names an ssl-ciphers list
// must use at least once (see parseSSLCiphers).
func SSLCipherNames() []string { return slices.Sorted(maps.Keys(opensslCiphers)) }

// AddsKnownCiphers reports whether the cipher list element c adds ciphers
// by names that are all in opensslCiphers ("HIGH", "ECDHE+AESGCM").
func AddsKnownCiphers(c string) bool {
	if c == "" || strings.ContainsRune("!-+@", rune(c[0])) {
		return false
	}
	for _, part := range strings.Split(c, "+") {
		if !opensslCiphers[part] {
			return false
		}
	}
	return true
}

// DNSChars reports whether v has only the characters of a lower-case DNS
// name (letters, digits, '-' and '.').
func DNSChars(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// MaxUpstreamTLSProfilesLimit is the largest Options.MaxUpstreamTLSProfiles
// (pkg/nginx renders at most as many).
const MaxUpstreamTLSProfilesLimit = 256

// ParseProxySSLName parses proxy-ssl-name: a DNS name (letters, digits,
// '-' and '.', labels of 1 to 63 characters), lower-cased.
func ParseProxySSLName(v string) (string, error) {
	l := strings.ToLower(v)
	if len(l) == 0 || len(l) > 253 || !DNSChars(l) {
		return "", errors.New("must be a DNS name")
	}
	for _, label := range strings.Split(l, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return "", errors.New("must be a DNS name")
		}
	}
	return l, nil
}

// ParseProxySSLProtocols parses proxy-ssl-protocols: TLSv1.2 and/or
// TLSv1.3 separated by spaces; it returns them sorted, once each.
func ParseProxySSLProtocols(v string) (string, error) {
	var out []string
	for _, p := range strings.Fields(v) {
		if p != "TLSv1.2" && p != "TLSv1.3" {
			return "", errors.New("must be TLSv1.2 and/or TLSv1.3 (the versions ingress-nginx v1.15 accepts; it ignores other values, using TLSv1.2)")
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return "", errors.New("must name TLSv1.2 and/or TLSv1.3")
	}
	slices.Sort(out)
	return strings.Join(out, " "), nil
}

// Limits of a cipher list.
const (
	maxCipherListLen  = 1024
	maxCipherElements = 64
)

// ParseProxySSLCiphers validates an OpenSSL cipher list: elements separated
// by ':', each an optional '!', '-' or '+' and then names of
// opensslCiphers joined by '+' (an element that removes ciphers may also
// use cipherRemovalNames), or @STRENGTH, or @SECLEVEL=0 to 5; at least one
// element adds ciphers (nginx -t refuses a list that matches none). The
// list is returned as given: it is made of known constants and separators
// only.
func ParseProxySSLCiphers(v string) (string, error) {
	if v == "" || len(v) > maxCipherListLen {
		return "", errors.New("must be a non-empty OpenSSL cipher list")
	}
	elems := strings.Split(v, ":")
	if len(elems) > maxCipherElements {
		return "", fmt.Errorf("must have at most %d elements", maxCipherElements)
	}
	adds := false
	for _, e := range elems {
		if e == "@STRENGTH" || len(e) == len("@SECLEVEL=0") && strings.HasPrefix(e, "@SECLEVEL=") && e[10] >= '0' && e[10] <= '5' {
			continue
		}
		adds = adds || AddsKnownCiphers(e)
		removes := e != "" && (e[0] == '!' || e[0] == '-')
		if e != "" && strings.IndexByte("!-+", e[0]) >= 0 {
			e = e[1:]
		}
		for _, part := range strings.Split(e, "+") {
			if !opensslCiphers[part] && !(removes && cipherRemovalNames[part]) {
				return "", fmt.Errorf("%q is not an OpenSSL cipher name or keyword", part)
			}
		}
	}
	if !adds {
		return "", errors.New("adds no cipher (such as HIGH or ECDHE-RSA-AES128-GCM-SHA256)")
	}
	return v, nil
}

// cipherRemovalNames are OpenSSL keywords that match no TLS 1.2 cipher of
// Debian's OpenSSL 3.0 (see opensslCiphers) but that cipher lists commonly
// remove ("!RC4", "!3DES").
var cipherRemovalNames = toSet("LOW", "MEDIUM", "EXP", "EXPORT", "3DES", "DES", "RC4", "RC2", "IDEA", "SEED",
	"aGOST", "aGOST01", "kGOST", "GOST94", "GOST89MAC", "kDHr", "kDHd", "kDH", "aDH", "ARIAGCM")
