package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/ingress-sync/ingress-sync/pkg/replay"
)

// maxDecodeInput bounds what decode reads from stdin: NATS payloads are at
// most 64 MiB.
const maxDecodeInput = 64 << 20

// decodeCommand turns one message payload on stdin into JSON on stdout, for
// `nats stream view INGRESS --translate 'syncer decode'`. On a bad payload
// it writes nothing to stdout; main prints the error on stderr and exits 1.
func decodeCommand(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("syncer decode", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: syncer decode [--show-secrets] < payload\n\nReads one encoded event on stdin and writes it as JSON.")
		fs.PrintDefaults()
	}
	showSecrets := fs.Bool("show-secrets", false, "print Secret data (base64) instead of redacting it")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return nil // the usage was printed
	} else if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q (the payload is read from stdin)", errUsage, fs.Args())
	}
	data, err := io.ReadAll(io.LimitReader(stdin, maxDecodeInput+1))
	if err != nil {
		return fmt.Errorf("decode: read stdin: %w", err)
	}
	if len(data) > maxDecodeInput {
		return fmt.Errorf("decode: payload larger than %d bytes", maxDecodeInput)
	}
	out, err := replay.DecodePayload(data, replay.DecodeOptions{ShowSecrets: *showSecrets})
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}
