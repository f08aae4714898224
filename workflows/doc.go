// Package workflows holds the agent loop as a Temporal workflow: pi's two
// nested loops, the tool-batch scheduler, the durable event log and the
// message handlers. Every name a client needs, and the types it sends and
// gets back, are package agentapi's (with agent.Message, agent.Event and
// the other types of package agent), which a client imports without the
// worker.
//
// Start reading at loop.go (AgentLoop) or session.go (AgentSession); each
// file re-makes a part of pi's agent (packages/agent/src/agent-loop.ts and
// agent.ts):
//
//	register.go          Register: what a worker registers, and its options
//	loop.go              AgentLoop (runAgentLoop, runAgentLoopContinue) and
//	                     runLoop, pi's two nested loops
//	session.go           AgentSession, pi's Agent: runs one prompt after another
//	session_handlers.go  the session's Updates: prompt, continue, steer,
//	                     followUp, abort, reset, the setters (Agent's methods)
//	state.go             the loop's state: context, newMessages, a run's reset
//	turn.go              streamAssistantResponse: one model turn
//	toolbatch.go         executeToolCalls, executeToolCallsSequential and
//	                     executeToolCallsParallel
//	parallel.go          the parallel batch's scheduler: calls run at once,
//	                     their events come out in pi's order
//	stages.go            prepareToolCall, executeToolCall and
//	                     finalizeToolCall around the activities
//	queue.go             PendingMessageQueue: steering and follow-up queues
//	inputs.go            large inputs: stored as stubs, capped in all
//	eventlog.go          the durable event log that replaces pi's subscribers
//	handlers.go          the run's Updates, Signals and Queries
//	fields.go            unknown fields in inputs and Update arguments refused
//	updates.go           idempotent Updates: a repeated Update ID answers again
//	approval.go          human approval of tool calls (not in pi: an Update)
//	budget.go            cost, token, turn and tool-call budgets (not in pi)
//	subagent.go          sub-agents: the task tool's call runs a child AgentLoop
//	subagent_signals.go  a child's usage, progress and approvals sent to its parent
//	compact.go           context compaction (pi-coding-agent's, durable)
//	carry.go             continue-as-new: what a run carries into the next
//	lost.go              a tool call whose worker was lost: the journal lookup
//	hosts.go             host affinity that survives hosts: a gone host's calls
//	                     end "host ... is unavailable", runs move to a live host
//	adopt.go             a run copies other runs' stored content it receives
//	attempts.go          a retried tool call keeps one attempt's queued messages
//	versioning.go        worker versioning: pinned runs, auto-upgrading sessions
//	visibility.go        search attributes and the run's status for the Web UI
//	rejections.go        TrimRejections: a refused large Update must not end the run
//	drift.go             config drift: a stage a worker cannot serve for want
//	                     of a model, key, tool, MCP server or hook moves on
package workflows
