// Package telemetry makes the agent loop observable with OpenTelemetry:
// traces through go.temporal.io/sdk/contrib/opentelemetry (the starter's
// StartWorkflow span, the workflow's RunWorkflow span, a span per activity
// attempt), a span per model call following the GenAI semantic conventions
// and one per tool call stage, the SDK's worker metrics and the agent's own
// metrics for Prometheus, and OTLP export configured by the standard
// OTEL_EXPORTER_OTLP_* variables.
//
// Start reading at Setup (setup.go), which a worker or a starter calls once.
// runspan.go keeps workflow spans replay-safe: the SDK's tracing interceptor
// would start a new RunWorkflow span each time a workflow is replayed from
// its history (after a sticky cache eviction or on another worker); here a
// run's span has an ID derived from the run and is emitted once, when the
// run completes live. agent.go has the model and tool spans and the agent
// metrics; they are made in an activity interceptor, so they describe
// attempts that really ran and are never replayed.
package telemetry
