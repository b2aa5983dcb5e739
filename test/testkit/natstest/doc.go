// Package natstest starts real, embedded NATS servers with JetStream for
// tests: on 127.0.0.1, a free port, storage in t.TempDir(), shut down by
// t.Cleanup. A Server can be stopped and restarted on the same port and
// store, so that tests can exercise NATS outages and server restarts.
package natstest
