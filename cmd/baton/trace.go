package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/baton-dev/baton/telemetry"
)

// flushTimeout bounds the export of a command's spans at its end, so that a
// collector that is down cannot hold the exit.
const flushTimeout = 5 * time.Second

// startTelemetry sets up tracing from the environment, as baton ask does:
// off (a no-op tracer, nothing connected to) unless an OTLP endpoint is
// set. flush exports what is left, bounded by flushTimeout, and warns on
// stderr when it cannot.
func startTelemetry(ctx context.Context, stderr io.Writer) (tracer trace.Tracer, flush func(), err error) {
	shutdown, tracer, err := telemetry.Setup(ctx, os.Getenv)
	if err != nil {
		return nil, nil, err
	}
	return tracer, func() {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
		defer cancel()
		if err := shutdown(fctx); err != nil {
			fmt.Fprintf(stderr, "baton: warning: %v\n", err)
		}
	}, nil
}
