// Package devserver finds the Temporal CLI and starts its dev server on
// loopback for tests, benchmarks and the conformance runner. It never
// downloads a binary: scripts/lib.sh builds the CLI from the module proxy
// (see CLIModule and CLIDir).
package devserver
