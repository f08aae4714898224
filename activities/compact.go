package activities

import (
	"context"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/compaction"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/store"
)

// ErrCompactionFailed is the ApplicationError type of a summarizer answer
// that ended in an error (pi's "Summarization failed: ..."): the provider
// was reached, so retrying the activity would ask it the same again.
const ErrCompactionFailed = "CompactionFailed"

// CompactInput asks for one compaction of the context Context names.
type CompactInput struct {
	Model    agent.ModelRef             `json:"model"`
	Options  agent.ModelOptions         `json:"options,omitempty"`
	Context  ContextRef                 `json:"context"`
	Previous *agentapi.CompactionRecord `json:"previous,omitempty"`
	Settings compaction.Settings        `json:"settings"`
	// Instructions are a manual compaction's custom instructions.
	Instructions string `json:"instructions,omitempty"`
	// Manual marks a compaction a person asked for.
	Manual bool `json:"manual,omitempty"`
}

// CompactOutput is a finished compaction, or why there was none.
type CompactOutput struct {
	// Refused says why nothing was compacted, in pi's words where pi has
	// them ("Already compacted", "Nothing to compact (session too small)").
	Refused string `json:"refused,omitempty"`
	// OldSegments hold the whole context before the compaction: the
	// record of the messages the summary replaced.
	OldSegments []agent.Segment `json:"oldSegments,omitempty"`
	// Segments hold the whole new context, Len messages whose chain hash
	// is Hash: the summary message, then the kept messages.
	Segments []agent.Segment `json:"segments,omitempty"`
	Len      int             `json:"len"`
	Hash     string          `json:"hash"`
	// LastRole is the role of the new context's last message.
	LastRole string `json:"lastRole,omitempty"`
	// Summary is the summary message (a stub when large).
	Summary   agent.Message             `json:"summary"`
	Record    agentapi.CompactionRecord `json:"record"`
	FirstKept int                       `json:"firstKept"`
	// Summarized counts the messages the summary replaced.
	Summarized   int         `json:"summarized"`
	SummaryChars int         `json:"summaryChars"`
	Usage        agent.Usage `json:"usage"`
}

// CompactContext is pi's compact(): it prepares the compaction of the
// context (where to cut, what to summarize), asks the run's own model for
// the summary (or two, for a turn too large to keep whole), and stores the
// new context, the summary message and the kept messages, as segments.
// Provider failures are retried as a model turn's are. The messages the
// summary replaces stay in the store (OldSegments) and in the event log.
func (a *Activities) CompactContext(ctx context.Context, in CompactInput) (CompactOutput, error) {
	model, err := a.Models.Model(in.Model)
	if err != nil {
		return CompactOutput{}, a.lacks("model %s: %v", in.Model, err)
	}
	ctx, stopWork := a.interruptible(ctx)
	defer stopWork()
	ctx, prior := keepBilled(ctx)
	tc, err := a.loadContext(ctx, in.Context)
	if err != nil {
		return CompactOutput{}, err
	}
	old, err := a.saveSegments(ctx, in.Context, tc.t)
	if err != nil {
		return CompactOutput{}, err
	}
	h, offset := historyOf(tc.resolved, in.Previous)
	p, err := compaction.PrepareCompaction(h, in.Settings)
	if err != nil {
		return CompactOutput{Refused: err.Error()}, nil
	}
	if p.NothingToSummarize() {
		// pi would ask the model to summarize an empty conversation, which
		// cannot make the context smaller.
		return CompactOutput{Refused: "Nothing to compact: the context since the last compaction fits in keepRecentTokens"}, nil
	}
	// What earlier attempts were billed rides on every heartbeat, as a
	// model turn's does (billed.go), and joins this attempt's usage.
	stop := a.heartbeatEvery(ctx, 5*time.Second, prior)
	defer stop()
	now := time.Now().UnixMilli()
	reqs := compaction.BuildRequests(p, compaction.RequestOptions{
		CustomInstructions: in.Instructions,
		ThinkingLevel:      in.Options.Reasoning,
		ModelReasons:       llm.Limits(in.Model.ID).Reasoning,
		Timestamp:          now,
	})
	var out CompactOutput
	var summaries compaction.Summaries
	for _, r := range []*compaction.SummaryRequest{reqs.History, reqs.TurnPrefix} {
		if r == nil {
			continue
		}
		answer, err := model.Stream(ctx, r.Request, func(agent.StreamEvent) {})
		if interrupted(ctx) || err != nil {
			// What this attempt was billed (the summary requests before
			// this one, and this one's partial answer) is left for the
			// next attempt, and goes along with the error (billed.go).
			billed := prior.Add(out.Usage)
			if e, ok := llm.AsError(err); interrupted(ctx) || !ok || e.Kind.Retryable() {
				stop()
				a.recordCompactionBilled(ctx, billed, answer.Usage)
			}
			if interrupted(ctx) {
				return CompactOutput{}, shutdownError("the compaction")
			}
			return CompactOutput{}, modelError(err, answer, billed)
		}
		if answer.Usage != nil {
			out.Usage = out.Usage.Add(*answer.Usage)
		}
		text, err := compaction.SummaryText(r.Kind, answer)
		if err != nil {
			// The summary was billed all the same (workflows/budget.go).
			return CompactOutput{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrCompactionFailed, nil, agent.Message{}, prior.Add(out.Usage))
		}
		if r.Kind == compaction.KindHistory {
			summaries.History = text
		} else {
			summaries.TurnPrefix = text
		}
	}
	out.Usage = prior.Add(out.Usage)
	applied := compaction.Apply(h, p, summaries, now)
	c := applied.Compaction

	// The new context: the summary message, then the kept messages as the
	// workflow holds them (stubs).
	summaryMsg, err := a.offloadMessage(ctx, compaction.SummaryMessage(c))
	if err != nil {
		return CompactOutput{}, err
	}
	next := agent.NewTranscript(tc.t.SystemPrompt)
	next.Append(summaryMsg)
	next.Append(tc.t.Messages[offset+c.FirstKept:]...)
	scope := activity.GetInfo(ctx).WorkflowExecution.ID
	var seg agent.Segment
	if err := a.retryStore(ctx, func() (err error) {
		seg, err = store.PutSegment(ctx, a.Store, scope, next.SystemPrompt, 0, next.Messages)
		return err
	}); err != nil {
		return CompactOutput{}, err
	}
	resolved := append([]agent.Message{compaction.SummaryMessage(c)}, tc.resolved[offset+c.FirstKept:]...)
	compacted := turnContext{t: next, resolved: resolved}
	compacted.storedAs([]agent.Segment{seg})
	a.remember(ctx, compacted)

	out.OldSegments = old
	out.Segments = []agent.Segment{seg}
	out.Len, out.Hash = next.Len(), next.HashAt(next.Len())
	if m, ok := next.Last(); ok {
		out.LastRole = m.Role
	}
	out.Summary = summaryMsg
	out.FirstKept = offset + c.FirstKept
	out.Summarized = c.FirstKept - p.SummarizeFrom
	out.SummaryChars = len(c.Summary)
	out.Record = agentapi.CompactionRecord{
		Kept:         c.At - c.FirstKept,
		TokensBefore: c.TokensBefore,
		TokensAfter:  estimateContext(resolved),
		Details:      c.Details,
		Timestamp:    c.Timestamp,
	}
	return out, nil
}

// historyOf is the compaction history of a context: after a compaction the
// context's first message is its summary and the messages after it are
// those it kept and those since, which is all PrepareCompaction reads (pi's
// History with the messages before FirstKept left out). offset is where
// History.Messages start in the context.
func historyOf(context []agent.Message, prev *agentapi.CompactionRecord) (compaction.History, int) {
	if prev == nil || len(context) == 0 {
		return compaction.History{Messages: context}, 0
	}
	summary := strings.TrimSuffix(strings.TrimPrefix(agent.TextOf(context[0].Content), compaction.SummaryPrefix), compaction.SummarySuffix)
	at := min(prev.Kept, len(context)-1)
	return compaction.History{
		Messages: context[1:],
		Last: &compaction.Compaction{
			Summary: summary, FirstKept: 0, At: at,
			TokensBefore: prev.TokensBefore, Details: prev.Details, Timestamp: prev.Timestamp,
		},
	}, 1
}

// estimateContext estimates a context by its characters, as pi estimates
// messages without usage: right after a compaction, the usage of the kept
// answers still counts the context before it.
func estimateContext(ms []agent.Message) int {
	n := 0
	for _, m := range ms {
		n += compaction.EstimateTokens(m)
	}
	return n
}

// heartbeatEvery heartbeats until stop is called: a summarizer call may
// take longer than the activity's heartbeat timeout, and the heartbeat's
// answer brings an abort.
func (a *Activities) heartbeatEvery(ctx context.Context, d time.Duration, billed agent.Usage) (stop func()) {
	done := make(chan struct{})
	var once sync.Once
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, agentapi.LiveProgress{Attempt: activity.GetInfo(ctx).Attempt, Billed: usagePtr(billed)})
			}
		}
	}()
	return func() {
		once.Do(func() { close(done) })
		<-stopped
	}
}

// recordCompactionBilled leaves a failed compaction attempt's usage, with
// what earlier ones were billed, for the next attempt to find.
func (a *Activities) recordCompactionBilled(ctx context.Context, billed agent.Usage, partial *agent.Usage) {
	if partial != nil {
		billed = billed.Add(*partial)
	}
	if billed == (agent.Usage{}) {
		return
	}
	info := activity.GetInfo(ctx)
	rpcCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), heartbeatTimeout)
	defer cancel()
	p := agentapi.LiveProgress{Attempt: info.Attempt, Billed: &billed}
	if err := a.Client.RecordActivityHeartbeat(rpcCtx, info.TaskToken, p); err != nil {
		activity.GetLogger(ctx).Warn("Could not record a failed attempt's usage", "Error", err)
	}
}
