// Package telemetry exports baton's work as OpenTelemetry traces that follow
// the GenAI semantic conventions: one span for an ask, one for its plan, one
// per sub-agent and one per model call, with the provider's exact usage.
// Tracing is off unless an OTLP endpoint is configured in the environment,
// and then nothing is connected to and nothing is slowed.
package telemetry

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"go.opentelemetry.io/otel/attribute"
)

// ScopeName names the instrumentation scope of baton's spans.
const ScopeName = "github.com/baton-dev/baton"

// Environment variables Setup reads. The exporter itself reads the rest of
// the standard OTEL_EXPORTER_OTLP_* variables (headers, protocol details).
const (
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvCaptureContent = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
)

// Enabled reports whether getenv names an OTLP endpoint for traces.
func Enabled(getenv func(string) string) bool {
	return strings.TrimSpace(getenv(EnvEndpoint)) != "" || strings.TrimSpace(getenv(EnvTracesEndpoint)) != ""
}

// CaptureContent reports whether message contents may go into spans: only
// when the user asked for it, since prompts hold their documents.
func CaptureContent(getenv func(string) string) bool {
	return strings.EqualFold(strings.TrimSpace(getenv(EnvCaptureContent)), "true")
}

// Setup returns the tracer baton's spans go to and a shutdown that flushes
// them. Without an endpoint in getenv the tracer is a no-op, no exporter is
// made and shutdown does nothing. The exporter connects lazily, so Setup
// itself never waits on the network; a collector that is down costs the
// export at shutdown, bounded by its context, never the run.
func Setup(ctx context.Context, getenv func(string) string) (shutdown func(context.Context) error, tracer trace.Tracer, err error) {
	if !Enabled(getenv) {
		return func(context.Context) error { return nil }, noop.NewTracerProvider().Tracer(ScopeName), nil
	}
	// The endpoint is passed from getenv rather than left to the
	// exporter's own os.Getenv, so that what Enabled saw is what is used.
	// A traces endpoint is used as it is; the general one gets the
	// signal's path, as the OTLP specification says.
	u := strings.TrimSpace(getenv(EnvTracesEndpoint))
	if u == "" {
		u = strings.TrimRight(strings.TrimSpace(getenv(EnvEndpoint)), "/") + "/v1/traces"
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u))
	if err != nil {
		return nil, nil, fmt.Errorf("telemetry: OTLP exporter: %w", err)
	}
	res := resource.NewSchemaless(attribute.String("service.name", serviceName(getenv)))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	shutdown = func(ctx context.Context) error {
		if err := tp.Shutdown(ctx); err != nil {
			return fmt.Errorf("telemetry: flushing spans: %w", err)
		}
		return nil
	}
	return shutdown, tp.Tracer(ScopeName), nil
}

func serviceName(getenv func(string) string) string {
	if s := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); s != "" {
		return s
	}
	return "baton"
}
