// Package otlpsink is an OTLP/HTTP trace receiver for tests: it takes what
// an exporter sends to a collector's /v1/traces, in the protocol's wire
// format (a protobuf ExportTraceServiceRequest, gzipped or not), answers
// as a collector does and keeps the spans. The telemetry tests read a
// run's trace back from it; internal/harness/jaeger runs a real Jaeger for the same
// checks where one is installed.
package otlpsink
