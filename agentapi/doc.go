// Package agentapi is the contract between the agent workflows and their
// clients: the task queue and workflow type names, the names and shapes of
// the Updates, Signals and Queries, the workflows' inputs and results, the
// search attributes and memo keys, and the heartbeat details a client reads
// to follow a model turn or a tool as it runs. Events and messages are
// package agent's, whose JSON is pi's.
//
// A client needs this package, agent and (for large content) store, never
// the worker: agentclient, the starter and a team's own client import no
// provider SDK, tool, sandbox or MCP package through it (agentclient's
// deps_test.go guards the list). The workflows and activities packages
// import it for the same names, so the two sides cannot drift apart.
//
//	names.go   task queue, workflow types, Update, Signal and Query names,
//	           error types, search attributes, memo keys, limits
//	types.go   inputs, results, the carry across continue-as-new, the
//	           arguments and answers of Updates, Signals and Queries
//	live.go    what running activities send: tool updates and queued
//	           messages (Signals), live progress (heartbeat details)
//	decode.go  inputs that never fail to decode: what is wrong is recorded
//	           and the run fails with ErrInvalidInput; DecodeInputStrict
//	fields.go  Update arguments remember a field they do not have, which
//	           the validators refuse
//	title.go   a session's title, as `starter session list` shows it
//
// Everything here is recorded in workflow history as JSON: renaming a field
// or changing its meaning breaks the replay of recorded runs.
package agentapi
