// Package crashtest holds the crash tests of the agent loop and what their
// worker process (internal/harness/crashtest/worker) serves: scripted models, a slow
// read-only tool, a blocking before hook, workflow variants for the
// deployment test and the tool-outcome journal (journal.go).
//
// The tests run against a real Temporal dev server on a SQLite file and real
// worker processes that they kill with SIGKILL: while a model turn streams,
// while a read-only tool runs, while bash runs, between prepare and execute,
// while the server itself is down, while a session waits for a person's
// approval, and across a deployment that changes the workflow code, and the
// recovery of a lost single-attempt tool from its host's tool journal.
package crashtest
