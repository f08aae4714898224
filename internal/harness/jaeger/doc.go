// Package jaeger runs a real Jaeger (v2, the OpenTelemetry Collector
// based binary of Jaeger v1.75.0) for tests and the demo: it receives
// OTLP over HTTP, keeps traces in memory and answers its query API, on
// free loopback ports. scripts/lib.sh's jaeger_bin builds the binary with
// go get -tool into GOBIN/jaeger-1.75.0 (Jaeger's module has replace
// directives, so go install cannot build it).
package jaeger
