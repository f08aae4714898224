// Package agentloop holds the deployment files at the root of the
// repository, so that code can start the same Temporal server they
// describe: internal/harness/stack renders the server's configuration from the
// compose file's `temporal` service and runs it with the dynamic config
// that service mounts. Everything else lives in the packages below.
package agentloop
