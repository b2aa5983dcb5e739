package events

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// SyncerStatus is what a syncer reports after every apply and periodically,
// as JSON on StatusSubject. The watcher turns these reports into Ingress
// events and writes an Ingress's status address once they show it served;
// operators read them with `nats sub '<prefix>-status.>'`.
type SyncerStatus struct {
	Pod string `json:"pod"`
	// Ready is true once the syncer has applied a configuration; the last
	// report of a syncer that stops says false again.
	Ready          bool      `json:"ready"`
	CaughtUp       bool      `json:"caughtUp"`
	Checksum       string    `json:"checksum"`
	Sequence       uint64    `json:"sequence"`
	LastError      string    `json:"lastError,omitempty"`
	Reloads        uint64    `json:"reloads"`
	DynamicUpdates uint64    `json:"dynamicUpdates"`
	Problems       int       `json:"problems"`
	Time           time.Time `json:"time"`
	// ProblemList holds the Problems of the applied configuration, at most
	// MaxReportedProblems of them (Problems counts them all). Reports of
	// syncers older than this field have none; the watcher then knows only
	// the count.
	ProblemList []ReportedProblem `json:"problemList,omitempty"`
	// Unserved lists the route objects (Ingresses, and the objects of any
	// other source), and the Gateways some listener of which is not served,
	// that the applied configuration does not serve as they ask (see
	// UnservedIngress), at most MaxReportedProblems of them, sorted by
	// kind, namespace and name. The watcher writes no status
	// address on them (docs/deploy.md). Reports of syncers older than this
	// field have none: the watcher then knows only the Sequence they
	// applied.
	Unserved []UnservedIngress `json:"unserved,omitempty"`
}

// UnservedIngress is a route object that the configuration a syncer
// applied leaves out, entirely or in part, or whose TLS host has the
// default certificate, and why (UnservedRoutes or UnservedCertificate).
// Kind is its kind, "" for an Ingress (as syncers before the field wrote).
type UnservedIngress struct {
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Why       string `json:"why"`
}

// Why an Ingress is not served: a rule or path of it is left out (its
// Service is missing, say) or its routes answer 503 (a Secret of an
// access-control annotation is missing); or one of its TLS hosts has the
// default certificate (its Secret is missing or not valid). An Ingress
// with both is reported with UnservedRoutes.
const (
	UnservedRoutes      = "routes"
	UnservedCertificate = "certificate"
)

// ReportedProblem is one Problem of a build (pkg/model's Problem) as a
// syncer reports it: the object left out, or partly ignored, and why.
type ReportedProblem struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Reason    string `json:"reason"`
}

// MaxReportedProblems bounds ProblemList, and MaxProblemReason each
// Reason in it (in bytes), so that a report stays far below max_payload.
const (
	MaxReportedProblems = 500
	MaxProblemReason    = 1024
)

// StatusSubject is the subject a syncer pod reports on:
// <prefix>-status.syncer.<pod>, with '.' in the pod name mapped to '_'.
func StatusSubject(prefix, pod string) string {
	return prefix + "-status.syncer." + strings.ReplaceAll(pod, ".", "_")
}

// StatusPrefix is the subject prefix of status reports: "<prefix>-status".
func StatusPrefix(prefix string) string { return prefix + "-status" }

// StatusFilter matches the reports of every syncer.
func StatusFilter(prefix string) string { return prefix + "-status.syncer.*" }

// EncodeStatus and DecodeStatus are the JSON codec of SyncerStatus.
func EncodeStatus(st SyncerStatus) ([]byte, error) { return json.Marshal(st) }

// DecodeStatus decodes a status report; errors wrap ErrMalformed.
func DecodeStatus(data []byte) (SyncerStatus, error) {
	var st SyncerStatus
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("%w: syncer status: %v", ErrMalformed, err)
	}
	return st, nil
}
