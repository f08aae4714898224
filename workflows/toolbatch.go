package workflows

import (
	"github.com/durable-agents/agentloop/agent"
	"go.temporal.io/sdk/workflow"
)

// toolBatch is what one assistant message's tool calls produced.
type toolBatch struct {
	messages  []agent.Message
	terminate bool
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
	for _, call := range calls {
		l.startCall(call)
		prep := l.prepare(ctx, call)
		if !prep.Immediate {
			if reason := l.needsApproval(call); reason != "" {
				l.requestApproval(ctx, call, reason)
				l.awaitApprovals(ctx, []string{call.ID})
				if denied, result := l.takeApproval(call.ID); denied {
					prep.Immediate, prep.IsError, prep.Result = true, true, result
				}
			}
		}
		fin := finalized{call: call, result: prep.Result, isError: prep.IsError}
		if !prep.Immediate {
			exec := l.execute(ctx, call, prep.Args)
			fin = l.finalize(ctx, call, prep.Args, exec.Result, exec.IsError)
		}
		l.endCall(fin)
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
	var asking []string
	for i, call := range calls {
		l.startCall(call)
		prep := l.prepare(ctx, call)
		if prep.Immediate {
			fin := finalized{call: call, result: prep.Result, isError: prep.IsError}
			l.endCall(fin)
			done[i] = &fin
			continue
		}
		if reason := l.needsApproval(call); reason != "" {
			l.requestApproval(ctx, call, reason)
			asking = append(asking, call.ID)
		}
		prepared = append(prepared, preparedCall{index: i, call: call, args: prep.Args})
	}
	if len(asking) > 0 {
		l.awaitApprovals(ctx, asking)
		allowed := prepared[:0]
		for _, p := range prepared {
			if denied, result := l.takeApproval(p.call.ID); denied {
				fin := finalized{call: p.call, result: result, isError: true}
				l.endCall(fin)
				done[p.index] = &fin
				continue
			}
			allowed = append(allowed, p)
		}
		prepared = allowed
	}
	l.runConcurrently(ctx, prepared, done)

	all := make([]finalized, len(calls))
	messages := make([]agent.Message, len(calls))
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

func (l *loop) startCall(call agent.Content) {
	l.pending = append(l.pending, call.ID)
	l.rawArgs[call.ID] = call.Arguments
	delete(l.queuedAttempt, call.ID)
	l.emit(agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: call.ID, ToolName: call.Name, Args: call.Arguments})
}

func (l *loop) endCall(f finalized) {
	r := f.result
	l.emit(agent.Event{Type: agent.EventToolExecutionEnd, ToolCallID: f.call.ID, ToolName: f.call.Name, Result: &r, IsError: f.isError})
	for i, id := range l.pending {
		if id == f.call.ID {
			l.pending = append(l.pending[:i], l.pending[i+1:]...)
			break
		}
	}
	delete(l.rawArgs, f.call.ID)
}

func (l *loop) isPending(id string) bool {
	for _, p := range l.pending {
		if p == id {
			return true
		}
	}
	return false
}

func (l *loop) toolNameOf(id string) string {
	for _, c := range l.lastAssistant.ToolCalls() {
		if c.ID == id {
			return c.Name
		}
	}
	return ""
}
