package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// toolBatch is what one assistant message's tool calls produced.
type toolBatch struct {
	messages  []agent.Message
	terminate bool
	// paused is the batch handed over to the next workflow run, its
	// calls not all ended (subagent_carry.go).
	paused *agentapi.PausedBatch
}

// finalized is a call's result after every stage (pi's FinalizedToolCall).
type finalized struct {
	call    agent.Content
	result  agent.ToolResult
	isError bool
}

// executeToolCalls is pi's executeToolCalls: sequential when the run says so
// or when any called tool declares executionMode sequential.
func (l *loop) executeToolCalls(ctx workflow.Context, calls []agent.Content) toolBatch {
	sequential := l.cfg.ToolExecution == agent.ExecutionSequential
	for _, c := range calls {
		if info, ok := l.tools[c.Name]; ok && info.ExecutionMode == agent.ExecutionSequential {
			sequential = true
		}
	}
	if sequential {
		return l.executeSequential(ctx, calls)
	}
	return l.executeParallel(ctx, calls)
}

// executeSequential finishes each call, result message included, before the
// next one starts.
func (l *loop) executeSequential(ctx workflow.Context, calls []agent.Content) toolBatch {
	var done []finalized
	var messages []agent.Message
	shared := sharedIDs(calls)
	for i, call := range calls {
		l.startCall(call, i+1)
		prep := l.prepare(ctx, call, i+1)
		if !prep.Immediate {
			if reason := l.needsApproval(call); reason != "" {
				key := callKey{call.ID, i + 1}
				l.requestApproval(ctx, call, key, shared[call.ID], reason)
				l.awaitApprovals(ctx, []callKey{key})
				if denied, result := l.takeApproval(key); denied {
					prep.Immediate, prep.IsError, prep.Result = true, true, result
				}
			}
		}
		fin := finalized{call: call, result: prep.Result, isError: prep.IsError}
		if !prep.Immediate {
			exec := l.execute(ctx, call, i+1, prep.Args)
			fin = l.finalize(ctx, call, prep.Args, exec.Result, exec.IsError)
		}
		l.endCall(i+1, fin)
		msg := agent.ToolResultMessage(call, fin.result, fin.isError, workflow.Now(ctx).UnixMilli())
		l.emitMessage(msg)
		done = append(done, fin)
		messages = append(messages, msg)
	}
	return toolBatch{messages: messages, terminate: shouldTerminate(done)}
}

// executeParallel prepares the calls one by one in call order (starts,
// validation and before hooks in order), then runs every prepared call's
// execute and finalize concurrently. Each tool_execution_end is emitted as
// its call finishes; result messages follow in call order once all have.
//
// Calls that need a person ask during preparation without waiting, so
// several approvals can be pending at once; executions start, as in pi,
// only when preparation is over, that is when every approval is decided.
// A denied call ends then, in call order.
func (l *loop) executeParallel(ctx workflow.Context, calls []agent.Content) toolBatch {
	done := make([]*finalized, len(calls))
	prepared := make([]preparedCall, 0, len(calls))
	var asking []callKey
	shared := sharedIDs(calls)
	for i, call := range calls {
		l.startCall(call, i+1)
		prep := l.prepare(ctx, call, i+1)
		if prep.Immediate {
			fin := finalized{call: call, result: prep.Result, isError: prep.IsError}
			l.endCall(i+1, fin)
			done[i] = &fin
			continue
		}
		if reason := l.needsApproval(call); reason != "" {
			key := callKey{call.ID, i + 1}
			l.requestApproval(ctx, call, key, shared[call.ID], reason)
			asking = append(asking, key)
		}
		prepared = append(prepared, preparedCall{index: i, call: call, args: prep.Args})
	}
	if len(asking) > 0 {
		l.awaitApprovals(ctx, asking)
		allowed := prepared[:0]
		for _, p := range prepared {
			if denied, result := l.takeApproval(callKey{p.call.ID, p.index + 1}); denied {
				fin := finalized{call: p.call, result: result, isError: true}
				l.endCall(p.index+1, fin)
				done[p.index] = &fin
				continue
			}
			allowed = append(allowed, p)
		}
		prepared = allowed
	}
	if paused := l.runConcurrently(ctx, prepared, done); paused != nil {
		return toolBatch{paused: paused}
	}
	return l.batchResults(ctx, done)
}

// batchResults ends a parallel batch: its result messages, in call order.
func (l *loop) batchResults(ctx workflow.Context, done []*finalized) toolBatch {
	all := make([]finalized, len(done))
	messages := make([]agent.Message, len(done))
	now := workflow.Now(ctx).UnixMilli()
	for i, fin := range done {
		all[i] = *fin
		messages[i] = agent.ToolResultMessage(fin.call, fin.result, fin.isError, now)
		l.emitMessage(messages[i])
	}
	return toolBatch{messages: messages, terminate: shouldTerminate(all)}
}

// shouldTerminate is pi's shouldTerminateToolBatch: every result of a
// non-empty batch asks to terminate.
func shouldTerminate(done []finalized) bool {
	if len(done) == 0 {
		return false
	}
	for _, f := range done {
		if !f.result.Terminate {
			return false
		}
	}
	return true
}

// runningCall is a tool call between its start and its end. pos is its
// place among its message's tool calls, from 1: a model may give two calls
// of one message the same id (some servers number calls per message, some
// send one id for all, some none), and pi keeps their events apart by
// position, so partial results and queued messages find their call by id
// and position.
type runningCall struct {
	call agent.Content
	pos  int
}

func (l *loop) startCall(call agent.Content, pos int) {
	l.pending = append(l.pending, runningCall{call: call, pos: pos})
	delete(l.queuedAttempt, call.ID)
	delete(l.queuedAttempt, attemptKey(call.ID, pos))
	l.emit(agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: call.ID, ToolName: call.Name, Args: call.Arguments, RawArgs: call.RawArguments})
}

func (l *loop) endCall(pos int, f finalized) {
	r := f.result
	l.emit(agent.Event{Type: agent.EventToolExecutionEnd, ToolCallID: f.call.ID, ToolName: f.call.Name, Result: &r, IsError: f.isError})
	for i, p := range l.pending {
		if p.pos == pos && p.call.ID == f.call.ID {
			l.pending = append(l.pending[:i], l.pending[i+1:]...)
			break
		}
	}
}

// running returns the started call a signal names, or nil when it has
// ended. Position 0 comes from an activity scheduled before positions
// existed: the first call with the id is taken, as then.
func (l *loop) running(id string, pos int) *runningCall {
	for i, p := range l.pending {
		if p.call.ID == id && (pos == 0 || p.pos == pos) {
			return &l.pending[i]
		}
	}
	return nil
}

// pendingIDs lists the ids of the started calls, in call order.
func (l *loop) pendingIDs() []string {
	ids := make([]string, 0, len(l.pending))
	for _, p := range l.pending {
		ids = append(ids, p.call.ID)
	}
	return ids
}

// sharedIDs names the ids that more than one call of a message has.
func sharedIDs(calls []agent.Content) map[string]bool {
	seen := make(map[string]bool, len(calls))
	shared := map[string]bool{}
	for _, c := range calls {
		if seen[c.ID] {
			shared[c.ID] = true
		}
		seen[c.ID] = true
	}
	return shared
}
