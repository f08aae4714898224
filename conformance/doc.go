// Package conformance runs the shared conformance scenarios through the real
// workflow on a real Temporal server and prints their normalized traces, to
// be compared with the traces pi itself produced for the same scenarios.
package conformance
