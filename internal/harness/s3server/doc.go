// Package s3server starts a real S3-compatible server for tests: versitygw
// (Apache-2.0) serving a temporary directory on a loopback port. Like the
// Temporal CLI (internal/harness/devserver), the binary comes from `go install`,
// never from a download.
package s3server
