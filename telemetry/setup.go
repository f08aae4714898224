package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
)

// Options configure Setup.
type Options struct {
	// ServiceName is service.name unless OTEL_SERVICE_NAME or
	// OTEL_RESOURCE_ATTRIBUTES say otherwise.
	ServiceName string
	// MetricsAddr serves the SDK's and the agent's metrics for Prometheus
	// at http://MetricsAddr/metrics; empty: no metrics.
	MetricsAddr string
	// SpanProcessor, when set, receives every span beside the OTLP
	// exporter and turns tracing on even without one (tests read spans
	// with it).
	SpanProcessor sdktrace.SpanProcessor
	// Getenv reads the OTEL_* variables; nil means os.Getenv.
	Getenv func(string) string
}

// Telemetry is what Setup made: the interceptors and metrics handler for
// the Temporal client, and the providers to flush on exit.
type Telemetry struct {
	// MetricsURL is where Prometheus scrapes, when metrics are on.
	MetricsURL string
	// Traces says where spans go ("" when tracing is off).
	Traces string

	tp        *sdktrace.TracerProvider
	mp        *sdkmetric.MeterProvider
	meter     metric.Meter
	server    *http.Server
	handler   client.MetricsHandler
	icpts     []interceptor.ClientInterceptor
	closeOnce sync.Once
}

// Setup configures tracing and metrics from o and the standard variables:
// tracing is on when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT names a collector (protocol from
// OTEL_EXPORTER_OTLP[_TRACES]_PROTOCOL: http/protobuf by default, or grpc;
// headers, TLS and timeouts from the exporters' own OTEL_EXPORTER_OTLP_*
// variables; sampling from OTEL_TRACES_SAMPLER), unless OTEL_SDK_DISABLED
// is true or OTEL_TRACES_EXPORTER is none. With neither tracing nor
// metrics, Setup returns a Telemetry that adds nothing to the client.
func Setup(ctx context.Context, o Options) (*Telemetry, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	t := &Telemetry{meter: noop.NewMeterProvider().Meter("")}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", o.ServiceName)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("telemetry resource: %w", err)
	}

	var tracer trace.Tracer = tracenoop.NewTracerProvider().Tracer("")
	exp, where, err := otlpExporter(ctx, getenv)
	if err != nil {
		return nil, err
	}
	if exp != nil || o.SpanProcessor != nil {
		opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res), sdktrace.WithIDGenerator(idGenerator{})}
		if exp != nil {
			opts = append(opts, sdktrace.WithBatcher(exp))
		}
		if o.SpanProcessor != nil {
			opts = append(opts, sdktrace.WithSpanProcessor(o.SpanProcessor))
			if where == "" {
				where = "in process"
			}
		}
		t.tp = sdktrace.NewTracerProvider(opts...)
		t.Traces = where
		tracer = t.tp.Tracer("github.com/durable-agents/agentloop")
	}

	if o.MetricsAddr != "" {
		if err := t.serveMetrics(res, o.MetricsAddr); err != nil {
			return nil, err
		}
	}

	if t.tp != nil {
		sdkTracer, err := temporalotel.NewTracer(temporalotel.TracerOptions{
			Tracer: t.tp.Tracer("go.temporal.io/sdk"),
			// A watcher polls a run's events by Query, and running tools
			// report progress to their workflow by Signal: a trace per
			// poll or report would bury the runs' own. Update handlers
			// run again when a workflow replays, and the SDK would trace
			// them again.
			DisableQueryTracing:  true,
			DisableSignalTracing: true,
			DisableUpdateTracing: true,
		})
		if err != nil {
			return nil, err
		}
		completed := &sync.Map{}
		rt := &runTracer{Tracer: sdkTracer, otel: t.tp.Tracer("go.temporal.io/sdk"), prop: temporalotel.DefaultTextMapPropagator, completed: completed}
		t.icpts = append(t.icpts, interceptor.NewTracingInterceptor(rt), &runCompletion{completed: completed})
	}
	if t.tp != nil || t.mp != nil {
		am, err := newAgentMetrics(t.meter)
		if err != nil {
			return nil, err
		}
		t.icpts = append(t.icpts, &agentInterceptor{tracer: tracer, metrics: am})
	}
	return t, nil
}

// otlpExporter is the OTLP span exporter the variables ask for, or nil.
func otlpExporter(ctx context.Context, getenv func(string) string) (sdktrace.SpanExporter, string, error) {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(getenv("OTEL_TRACES_EXPORTER"), "none") {
		return nil, "", nil
	}
	endpoint := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	generic := endpoint == ""
	if generic {
		endpoint = getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	if endpoint == "" {
		return nil, "", nil
	}
	protocol := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var exp sdktrace.SpanExporter
	var err error
	switch protocol {
	case "", "http/protobuf":
		protocol = "http/protobuf"
		// The exporters read the other variables themselves; the
		// endpoint is passed for getenv to be the one that decides.
		url := endpoint
		if generic {
			url = strings.TrimSuffix(url, "/") + "/v1/traces"
		}
		exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(url))
	case "grpc":
		exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(endpoint))
	default:
		return nil, "", fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: want http/protobuf or grpc", protocol)
	}
	if err != nil {
		return nil, "", fmt.Errorf("OTLP trace exporter: %w", err)
	}
	return exp, "OTLP " + protocol + " " + endpoint, nil
}

// serveMetrics serves the metrics of a new meter provider for Prometheus,
// with the Go runtime's and the process's own.
func (t *Telemetry) serveMetrics(res *resource.Resource, addr string) error {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo())
	if err != nil {
		return fmt.Errorf("prometheus exporter: %w", err)
	}
	t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithResource(res))
	t.meter = t.mp.Meter("github.com/durable-agents/agentloop")
	t.handler = temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{
		Meter:                t.mp.Meter("go.temporal.io/sdk"),
		UseMonotonicCounters: true,
		OnError:              func(error) {},
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.server = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	t.MetricsURL = "http://" + ln.Addr().String() + "/metrics"
	go func() { _ = t.server.Serve(ln) }()
	return nil
}

// Apply adds the interceptors and the metrics handler to client options:
// a client dialled with them traces what it starts, and a worker made
// from it traces and measures what it runs.
func (t *Telemetry) Apply(opts *client.Options) {
	opts.Interceptors = append(opts.Interceptors, t.icpts...)
	if t.handler != nil {
		opts.MetricsHandler = t.handler
	}
}

// Interceptors are the tracing interceptors (the SDK's, made replay-safe)
// followed by the agent's model and tool call interceptor; nil when
// telemetry is off.
func (t *Telemetry) Interceptors() []interceptor.ClientInterceptor { return t.icpts }

// MetricsHandler is the SDK's metrics handler over OpenTelemetry; nil when
// metrics are off.
func (t *Telemetry) MetricsHandler() client.MetricsHandler { return t.handler }

// Tracer is a tracer of the provider Setup made (a no-op one when tracing
// is off).
func (t *Telemetry) Tracer(name string) trace.Tracer {
	if t.tp == nil {
		return tracenoop.NewTracerProvider().Tracer(name)
	}
	return t.tp.Tracer(name)
}

// Meter is the agent's meter (a no-op one when metrics are off).
func (t *Telemetry) Meter() metric.Meter { return t.meter }

// ForceFlush exports the spans ended so far.
func (t *Telemetry) ForceFlush(ctx context.Context) error {
	if t.tp == nil {
		return nil
	}
	return t.tp.ForceFlush(ctx)
}

// Shutdown flushes spans and stops the metrics endpoint.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	var errs []error
	t.closeOnce.Do(func() {
		if t.tp != nil {
			errs = append(errs, t.tp.Shutdown(ctx))
		}
		if t.server != nil {
			errs = append(errs, t.server.Shutdown(ctx))
		}
		if t.mp != nil {
			errs = append(errs, t.mp.Shutdown(ctx))
		}
	})
	return errors.Join(errs...)
}

// Describe says where traces and metrics go, for the start-up log line.
func (t *Telemetry) Describe() string {
	traces := "off"
	if t.Traces != "" {
		traces = t.Traces
	}
	metrics := "off"
	if t.MetricsURL != "" {
		metrics = t.MetricsURL
	}
	return "traces " + traces + ", metrics " + metrics
}
