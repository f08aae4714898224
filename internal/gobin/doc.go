// Package gobin finds where `go install` puts binaries, for the code that
// looks for the servers and tools the tests and scripts/lib.sh install
// there (the Temporal CLI, versitygw, Jaeger).
package gobin
