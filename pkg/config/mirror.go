package config

// MaxMirrors bounds the mirrors of one Location.
const MaxMirrors = 8

// Mirror is one copy of a Location's requests (ingress-nginx's mirror-*
// annotations, a Gateway API RequestMirror filter), validated: the data
// plane sends it in the background and discards its answer, so it never
// delays or fails the request it copies.
//
// Exactly one of Backend and URL is set. Backend is the Name of the Backend
// that gets the copies (a backendRef); URL is an http:// or https:// URL whose
// host and port are fixed and whose path and query are a template of the
// variables intent.AuthVariable accepts ("https://m.example.com$request_uri").
// A URL without a path sends the request's own URI.
//
// Host is the Host header of the copy: "" sends the URL's host (URL) or the
// request's (Backend). Body sends the request body with the copy.
// Numerator of every Denominator requests are copied, at random
// (1 <= Denominator <= 1000000, 0 <= Numerator <= Denominator).
type Mirror struct {
	Backend     string `json:"backend,omitempty"`
	URL         string `json:"url,omitempty"`
	Host        string `json:"host,omitempty"`
	Body        bool   `json:"body,omitempty"`
	Numerator   int    `json:"numerator"`
	Denominator int    `json:"denominator"`
}

// MaxMirrorDenominator bounds Mirror.Denominator.
const MaxMirrorDenominator = 1000000
