// Command worker is the crash tests' worker process: the AgentLoop workflow
// (or a changed variant of it), its activities, the scripted models, the
// built-in tools, slow_read and the blocking before hook of package
// crashtest. The tests start it, wait for "ready" on stdout and kill it with
// SIGKILL.
package main
