// Command stack starts and stops the self-hosted Temporal stack of
// docker-compose.yml on this machine, without Docker (see internal/harness/stack):
//
//	stack up      PostgreSQL, Temporal's server and the Web UI, left running
//	stack down    stop them
//	stack status  what runs, and where
//
// scripts/stack installs what it needs first and runs it in .stack/.
package main
