// Package stack runs the self-hosted Temporal stack of docker-compose.yml
// without Docker: PostgreSQL from the system's packages, Temporal's server
// and its schema tool built from source (scripts/lib.sh builds them in the
// Temporal CLI's module graph), and the Web UI's server. The server's configuration is rendered from the compose file's
// temporal service (compose.go), so the two run the same settings;
// scripts/stack starts and stops it (cmd/stack), and tests and benchmarks
// start their own with Up or with StartPostgres and StartServer.
package stack
