// Package testenv gives tests a real Temporal server: the one at
// TEMPORAL_ADDRESS when set, else a dev server started once per test
// binary from the Temporal CLI on loopback.
package testenv
