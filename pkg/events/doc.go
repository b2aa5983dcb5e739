// Package events is the bottom layer of ingress-sync: the event envelope that
// the watcher publishes for every change of an ingress input, its msgpack
// codec, the NATS subject and header conventions, JetStream stream
// provisioning, an asynchronous publisher and an ordered consumer.
//
// A message on the stream is one Event. Its subject is
// <prefix>.<kind>.<namespace>.<name> (see Subject), its headers repeat the
// identifying fields in readable form so that `nats stream view` is useful
// without decoding, and its payload is the msgpack-encoded envelope holding
// the trimmed Kubernetes object.
package events
