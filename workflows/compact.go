package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/compaction"
	"github.com/durable-agents/agentloop/llm"
)

// Context compaction (pi-coding-agent's compaction, package compaction):
// when the context nears the model's window, its oldest part is replaced by
// a summary the run's own model writes, in the CompactContext activity.
// Where pi goes wrong, this does not:
//
//   - pi checks only after agent_end, so a long tool loop overflows first
//     (pi #7821), and against the last answer's usage, after the fact (pi
//     #6879). Here the check runs before every model turn, with the
//     messages added since the last answer estimated: after every tool
//     batch, and before a run's first turn with its prompts.
//   - A compaction race lost a turn in pi (#7086). Here the compaction is
//     a durable step of the loop: nothing is added to the context while it
//     runs (steering and follow-ups wait in their queues as usual), an
//     abort ends it with the context as it was, and a crash retries it.
//
// A provider's overflow error compacts and sends the turn again, once, as
// pi's overflow recovery does; a second overflow ends the turn with the
// provider's error.

// compactState is the loop's compaction settings and record.
type compactState struct {
	// modelWindow is the window pi-ai's table gives the model the next run
	// uses (ResolveRun's answer).
	modelWindow int
	settings    compaction.Settings
	// window is the model's context window; 0 (unknown) leaves only the
	// overflow recovery and manual compaction.
	window int
	last   *agentapi.CompactionRecord
	// at is the context's length right after the latest compaction.
	at          int
	count       int
	tokensSaved int
	// overflowRetried is set while a turn is sent again after an overflow.
	overflowRetried bool
}

// configureCompaction resolves the settings from the run's configuration
// and the model's window (ResolveRun's, from pi-ai's table).
func (l *loop) configureCompaction() {
	s := compaction.DefaultSettings
	window := l.compact.modelWindow
	if c := l.cfg.Compaction; c != nil {
		s.Enabled = !c.Disabled
		if c.ReserveTokens > 0 {
			s.ReserveTokens = c.ReserveTokens
		}
		if c.KeepRecentTokens > 0 {
			s.KeepRecentTokens = c.KeepRecentTokens
		}
		if c.ContextWindow > 0 {
			window = c.ContextWindow
		}
	}
	l.compact.settings, l.compact.window = s, window
}

// estimateTokens is compaction.EstimateTokens of a message whose large
// blocks are stubs: a stub counts as its stored size, as pi counts text.
func estimateTokens(m agent.Message) int {
	n := compaction.EstimateTokens(m)
	for _, c := range m.Content {
		if c.Blob == nil {
			continue
		}
		switch {
		case c.Type == agent.ContentImage && m.Role == agent.RoleToolResult:
			n += 1200
		case c.Type == agent.ContentText || c.Type == agent.ContentThinking:
			n += (c.Blob.Size + 3) / 4
		}
	}
	return n
}

// contextTokens estimates the context the next model turn sends, as pi's
// compaction check does: the last usable answer's usage, plus an estimate
// of the messages after it; after a compaction and before any answer, the
// compacted context's estimate plus the messages since.
func (l *loop) contextTokens() int {
	held := l.context.Since(l.context.Offset)
	sum := func(ms []agent.Message) int {
		n := 0
		for _, m := range ms {
			n += estimateTokens(m)
		}
		return n
	}
	for i := len(held) - 1; i >= 0; i-- {
		m := held[i]
		if m.Role != agent.RoleAssistant || m.Usage == nil || m.StopReason.Unanswered() {
			continue
		}
		if l.compact.last != nil && m.Timestamp < l.compact.last.Timestamp {
			break
		}
		return compaction.CalculateContextTokens(*m.Usage) + sum(held[i+1:])
	}
	if l.compact.last != nil {
		return l.compact.last.TokensAfter + sum(l.context.Since(max(l.compact.at, l.context.Offset)))
	}
	return sum(held)
}

// maybeCompact compacts the context when it nears the model's window. It
// runs before every model turn.
func (l *loop) maybeCompact(ctx workflow.Context) {
	c := l.compact
	if !c.settings.Enabled || c.window <= 0 || l.aborted {
		return
	}
	if tokens := l.contextTokens(); compaction.ShouldCompact(tokens, c.window, c.settings) {
		l.compactContext(ctx, l.activityCtx(), agent.CompactionThreshold, "", tokens)
	}
}

// compactContext runs one compaction and, when it compacted, replaces the
// context with the compacted one. It reports whether it did, or why not.
// The main coroutine waits for it handling signals; an Update handler
// (actx not abortable by a run) waits plainly.
func (l *loop) compactContext(ctx, actx workflow.Context, reason, instructions string, tokens int) (bool, string) {
	l.emit(agent.Event{Type: agent.EventCompactionStart, Compaction: &agent.CompactionInfo{Reason: reason}})
	base := agent.SegmentsLen(l.segments)
	ref := activities.ContextRef{Segments: l.segments, BaseLen: base, BaseHash: l.context.HashAt(base), Delta: l.context.Since(base), StoreID: l.storeID}
	if base == 0 {
		ref.SystemPrompt = l.context.SystemPrompt
	}
	opts := modelActivityOptions(l.cfg)
	opts.Summary = fmt.Sprintf("compact: %s tokens (%s)", kTokens(tokens), reason)
	var f workflow.Future
	var drift driftWait
	for again := true; again; {
		f = workflow.ExecuteActivity(workflow.WithActivityOptions(actx, opts), a.CompactContext, activities.CompactInput{
			Model:        l.cfg.Model,
			Options:      l.cfg.ModelOptions,
			Context:      ref,
			Previous:     l.compact.last,
			Settings:     l.compact.settings,
			Instructions: instructions,
			Manual:       reason == agent.CompactionManual,
		})
		if reason == agent.CompactionManual {
			_ = f.Get(ctx, nil)
		} else {
			l.wait(ctx, f)
		}
		// A worker that lacks the model leaves the compaction to another
		// (drift.go); an abort meanwhile cancels the next one at once.
		again = l.driftAgain(ctx, &drift, f.Get(ctx, nil), reason != agent.CompactionManual)
	}
	var out activities.CompactOutput
	end := agent.CompactionInfo{Reason: reason}
	if err := f.Get(ctx, &out); err != nil {
		var cancelled *temporal.CanceledError
		if errors.As(err, &cancelled) {
			end.Aborted = true
			l.emit(agent.Event{Type: agent.EventCompactionEnd, Compaction: &end})
			return false, "aborted"
		}
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) && appErr.HasDetails() {
			// A failed summary was billed too (budget.go).
			partial, earlier := failureDetails(appErr)
			if partial.Usage != nil {
				earlier = earlier.Add(*partial.Usage)
			}
			l.usage = l.usage.Add(earlier)
		}
		end.ErrorMessage = compactionFailure(reason) + failureText(err)
		l.emit(agent.Event{Type: agent.EventCompactionEnd, Compaction: &end})
		return false, end.ErrorMessage
	}
	if out.Refused != "" {
		end.ErrorMessage = out.Refused
		l.emit(agent.Event{Type: agent.EventCompactionEnd, Compaction: &end})
		return false, out.Refused
	}
	oldLen := l.context.Len()
	if l.inRun && l.runStart < oldLen {
		// The run's messages so far are now only in the old context.
		l.runEarlier = append(l.runEarlier, agent.MessageRange{Segments: out.OldSegments, From: l.runStart, To: oldLen})
	}
	l.context = agent.NewTranscriptAt(l.context.SystemPrompt, out.Len, out.Hash)
	l.segments = out.Segments
	l.runStart = out.Len
	record := out.Record
	l.compact.last, l.compact.at = &record, out.Len
	l.compact.count++
	l.compact.tokensSaved += max(record.TokensBefore-record.TokensAfter, 0)
	l.usage = l.usage.Add(out.Usage)
	summary := out.Summary
	end.Result = &agent.CompactionResult{
		Summary: &summary, FirstKept: out.FirstKept, Summarized: out.Summarized,
		TokensBefore: record.TokensBefore, TokensAfter: record.TokensAfter, SummaryChars: out.SummaryChars, Usage: out.Usage,
	}
	end.WillRetry = reason == agent.CompactionOverflow
	l.emit(agent.Event{Type: agent.EventCompactionEnd, Compaction: &end})
	return true, ""
}

// compactionFailure is pi's prefix of a failed compaction's message.
func compactionFailure(reason string) string {
	switch reason {
	case agent.CompactionOverflow:
		return "Context overflow recovery failed: "
	case agent.CompactionThreshold:
		return "Auto-compaction failed: "
	}
	return "Compaction failed: "
}

// modelActivityOptions are the options of the activities that call the
// model: the model turn's and the compaction's. Only the activities'
// timeouts and retries depend on them, never the workflow's commands, so
// histories recorded with other options replay unchanged.
func modelActivityOptions(cfg agent.LoopConfig) workflow.ActivityOptions {
	window := cfg.ModelRetryWindow()
	return workflow.ActivityOptions{
		ScheduleToCloseTimeout: window,
		StartToCloseTimeout:    min(modelTurnTimeout, window),
		HeartbeatTimeout:       modelHeartbeat,
		WaitForCancellation:    true,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    modelRetryInterval,
			NonRetryableErrorTypes: []string{
				string(llm.ErrBadRequest), string(llm.ErrAuth), string(llm.ErrNotFound),
				string(llm.ErrContextOverflow), activities.ErrUnknownModel, activities.ErrContextMismatch,
				activities.ErrCompactionFailed, activities.ErrContentMissing, activities.ErrContentCorrupt,
			},
		},
	}
}

// kTokens writes a token count as the Web UI's summary line shows it.
func kTokens(n int) string {
	if n >= 1000 {
		return fmt.Sprintf("%dK", (n+500)/1000)
	}
	return fmt.Sprint(n)
}

// isOverflow reports a model turn the provider refused as too long.
func isOverflow(err error) bool {
	var appErr *temporal.ApplicationError
	return errors.As(err, &appErr) && appErr.Type() == string(llm.ErrContextOverflow)
}
