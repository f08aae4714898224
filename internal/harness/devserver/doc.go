// Package devserver finds the Temporal CLI and starts its dev server on
// loopback for tests, benchmarks and the conformance runner. It never
// downloads a binary: the CLI comes from `go install` (see CLIModule).
package devserver
