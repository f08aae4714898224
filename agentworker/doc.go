// Package agentworker assembles an agent loop worker: the AgentLoop and
// AgentSession workflows and their activities over a client, a content
// store, models, tools and hooks, on a task queue and, when asked, a tool
// queue and a host queue. The worker command (worker/) is flags and one
// call to New; tests, the bench and the crash harness call it too, so
// they run the worker the command runs. The example adds a Go tool of
// one's own.
package agentworker
