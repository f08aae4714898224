package workflows_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/compaction"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

// windowModel is a model with a context window: it refuses a request over
// the window with the provider's overflow error, reports as usage the
// request's size, answers a prompt with one dump call and the dump's result
// with "done: <prompt>", and answers a summarization request (pi's
// summarizer system prompt) with a summary that names what it was sent.
type windowModel struct {
	window int
	mu     sync.Mutex
	// overflows counts refused requests, summaries the summary requests.
	overflows int
	summaries []llm.Request
	// gate, when set, holds summary requests until it is closed.
	gate chan struct{}
}

func requestTokens(req llm.Request) int {
	n := (len(req.SystemPrompt) + 3) / 4
	for _, m := range req.Messages {
		n += compaction.EstimateTokens(m)
	}
	return n
}

func (w *windowModel) Stream(ctx context.Context, req llm.Request, emit func(agent.StreamEvent)) (agent.Message, error) {
	tokens := requestTokens(req)
	if tokens > w.window {
		w.mu.Lock()
		w.overflows++
		w.mu.Unlock()
		return agent.Message{}, &llm.Error{Kind: llm.ErrContextOverflow, Status: 400,
			Message: fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens.", w.window, tokens)}
	}
	msg := agent.Message{Role: agent.RoleAssistant, API: "test", Provider: "window", Model: "w",
		Usage: &agent.Usage{Input: int64(tokens), Output: 10, TotalTokens: int64(tokens) + 10}, StopReason: agent.StopReasonStop}
	if req.SystemPrompt == compaction.SummarizationSystemPrompt {
		w.mu.Lock()
		w.summaries = append(w.summaries, req)
		gate := w.gate
		w.mu.Unlock()
		if gate != nil {
			select {
			case <-gate:
			case <-ctx.Done():
				return agent.Message{}, ctx.Err()
			}
		}
		msg.Content = []agent.Content{agent.Text(fmt.Sprintf("## Goal\nSummary %d of %d tokens.", len(w.summaries), tokens))}
		return msg, nil
	}
	last := req.Messages[len(req.Messages)-1]
	var prompt string
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := req.Messages[i]; m.Role == agent.RoleUser && !strings.HasPrefix(agent.TextOf(m.Content), compaction.SummaryPrefix) {
			prompt = agent.TextOf(m.Content)
			break
		}
	}
	if last.Role == agent.RoleUser {
		msg.Content = []agent.Content{agent.ToolCall(fmt.Sprintf("c%d", len(req.Messages)), "dump", map[string]any{})}
		msg.StopReason = agent.StopReasonToolUse
		return msg, nil
	}
	msg.Content = []agent.Content{agent.Text("done: " + prompt)}
	return msg, nil
}

// newWindowWorker starts a worker whose model is m and whose dump tool
// returns about 1,000 tokens.
func newWindowWorker(t *testing.T, m llm.Model) (client.Client, string) {
	t.Helper()
	c := testenv.Client(t)
	models := llm.NewRegistry()
	models.Register("window", llm.ProviderFunc(func(string) (llm.Model, error) { return m, nil }))
	dump := tool("dump", func(context.Context, tools.Call) (agent.ToolResult, error) {
		return agent.TextResult(strings.Repeat("output line of the dump tool\n", 140)), nil
	})
	queue := "compact-" + testenv.Suffix()
	w, err := agentworker.New(agentworker.Options{Client: c, Store: testenv.Store(t), TaskQueue: queue, Models: models, Tools: tools.NewRegistry(dump)})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return c, queue
}

func startWindowSession(t *testing.T, c client.Client, queue string, in agentapi.SessionInput) client.WorkflowRun {
	t.Helper()
	in.Model = agent.ModelRef{Provider: "window", ID: "w"}
	in.Tools = []string{"dump"}
	run, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: "compact-" + testenv.Suffix(), TaskQueue: queue},
		agentapi.SessionWorkflow, in)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.TerminateWorkflow(context.Background(), run.GetID(), "", "test over") })
	return run
}

// promptAll sends prompts one after another, each when the run before has
// ended, and returns the session's events from the first prompt on.
func promptAll(t *testing.T, c client.Client, run client.WorkflowRun, prompts []string) []agent.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ended := make(chan agent.Event, len(prompts))
	var mu sync.Mutex
	var events []agent.Event
	done := make(chan error, 1)
	st, err := agentclient.State(ctx, c, run.GetID())
	require.NoError(t, err)
	go func() {
		done <- agentclient.Watch(ctx, c, run.GetID(), "", agentclient.WatchOptions{After: st.LastEvent, Store: testenv.Store(t)}, func(e agent.Event) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
			if e.Type == agent.EventAgentEnd {
				ended <- e
			}
		})
	}()
	for i, p := range prompts {
		require.NoError(t, agentclient.Update(ctx, c, run.GetID(), agentapi.UpdatePrompt, agentapi.PromptRequest{Text: p}, nil))
		select {
		case e := <-ended:
			last := e.Messages[len(e.Messages)-1]
			require.Equal(t, "done: "+p, agent.TextOf(last.Content), "prompt %d answered (%s)", i, last.ErrorMessage)
		case err := <-done:
			t.Fatalf("watch ended after %d prompts: %v", i, err)
		case <-ctx.Done():
			t.Fatalf("prompt %d not answered", i)
		}
	}
	cancel()
	mu.Lock()
	defer mu.Unlock()
	return append([]agent.Event(nil), events...)
}

func compactionEnds(events []agent.Event) []agent.CompactionInfo {
	var out []agent.CompactionInfo
	for _, e := range events {
		if e.Type == agent.EventCompactionEnd {
			out = append(out, *e.Compaction)
		}
	}
	return out
}

// A session of 150 prompts (300 turns, each prompt adding about 1,000
// tokens) with a 32K-token window compacts by itself before each turn that
// would come near the window, never overflows, answers every prompt, and
// keeps its compacted context across continue-as-new.
func TestSessionCompactsAutomatically(t *testing.T) {
	t.Parallel() // one of the long tests: they run beside each other
	if testing.Short() {
		t.Skip("150 prompts")
	}
	m := &windowModel{window: 32000}
	c, queue := newWindowWorker(t, m)
	run := startWindowSession(t, c, queue, agentapi.SessionInput{
		LoopConfig: agent.LoopConfig{Compaction: &agent.CompactionConfig{ContextWindow: 32000, ReserveTokens: 8192, KeepRecentTokens: 8000}},
		// Seams too, so the compacted context crosses them.
		ContinueAsNewAfterTurns: 100,
	})
	var prompts []string
	for i := range 150 {
		prompts = append(prompts, fmt.Sprintf("prompt %d", i))
	}
	events := promptAll(t, c, run, prompts)
	require.Zero(t, m.overflows, "the context never overflowed")
	ends := compactionEnds(events)
	require.NotEmpty(t, ends)
	for _, e := range ends {
		require.Equal(t, agent.CompactionThreshold, e.Reason)
		require.Empty(t, e.ErrorMessage)
		require.NotNil(t, e.Result)
		require.Less(t, e.Result.TokensAfter, e.Result.TokensBefore)
		require.Contains(t, agent.TextOf(e.Result.Summary.Content), "<summary>\n## Goal\nSummary")
	}
	t.Logf("%d prompts, %d compactions, %d summary calls", len(prompts), len(ends), len(m.summaries))
	// From the second compaction on, the summarizer updates the summary
	// before it (pi's update prompt).
	updated := false
	for _, r := range m.summaries {
		updated = updated || strings.Contains(agent.TextOf(r.Messages[0].Content), "<previous-summary>\n## Goal\nSummary 1 of")
	}
	require.True(t, updated, "a later compaction updates the first summary")

	st, err := agentclient.State(context.Background(), c, run.GetID())
	require.NoError(t, err)
	require.Equal(t, len(ends), st.Compactions)
	require.Positive(t, st.TokensSaved)
	require.Less(t, st.ContextTokens, 32000-8192)
	desc, err := c.DescribeWorkflow(context.Background(), run.GetID(), "")
	require.NoError(t, err)
	require.NotEqual(t, run.GetRunID(), desc.RawResponse.GetWorkflowExecutionInfo().GetExecution().GetRunId(), "the session continued as new")
	_, ctxMsgs, err := agentclient.Context(context.Background(), c, testenv.Store(t), run.GetID())
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(agent.TextOf(ctxMsgs[0].Content), compaction.SummaryPrefix),
		"the compacted context, summary first, crossed the seams")
	for i, e := range events {
		require.EqualValues(t, events[0].Seq+int64(i), e.Seq, "gap-free")
	}
}

// Without a known window a session compacts only when the provider refuses
// the context: the turn is sent again once after the compaction, and every
// prompt is answered.
func TestSessionRecoversFromOverflow(t *testing.T) {
	m := &windowModel{window: 16000}
	c, queue := newWindowWorker(t, m)
	run := startWindowSession(t, c, queue, agentapi.SessionInput{
		LoopConfig: agent.LoopConfig{Compaction: &agent.CompactionConfig{ReserveTokens: 4096, KeepRecentTokens: 4000}},
	})
	var prompts []string
	for i := range 30 {
		prompts = append(prompts, fmt.Sprintf("prompt %d", i))
	}
	events := promptAll(t, c, run, prompts)
	ends := compactionEnds(events)
	require.NotEmpty(t, ends)
	require.Equal(t, len(ends), m.overflows, "each refused turn compacted once")
	for _, e := range ends {
		require.Equal(t, agent.CompactionOverflow, e.Reason)
		require.True(t, e.WillRetry)
		require.NotNil(t, e.Result)
	}
	// The refused turns never show: each turn has one assistant message.
	for _, e := range events {
		if e.Type == agent.EventMessageEnd && e.Message.Role == agent.RoleAssistant {
			require.NotEqual(t, agent.StopReasonError, e.Message.StopReason, e.Message.ErrorMessage)
		}
	}
}

// A steering message sent while a compaction runs waits in its queue and
// is injected at the next poll, as ever; an abort during a compaction ends
// it with the context as it was.
func TestSteerAndAbortDuringCompaction(t *testing.T) {
	t.Parallel() // one of the long tests: they run beside each other
	m := &windowModel{window: 32000, gate: make(chan struct{})}
	c, queue := newWindowWorker(t, m)
	run := startWindowSession(t, c, queue, agentapi.SessionInput{
		LoopConfig: agent.LoopConfig{Compaction: &agent.CompactionConfig{ContextWindow: 32000, ReserveTokens: 8192, KeepRecentTokens: 8000}},
	})

	// Prompt until a compaction starts (its summarizer call waits at the
	// gate), then steer.
	after := promptUntilCompacting(t, c, run, m)
	_, err := agentclient.Steer(context.Background(), c, run.GetID(), "steered during the compaction")
	require.NoError(t, err)
	m.open()
	end := waitAgentEnd(t, c, run, after)
	var texts []string
	for _, msg := range end.Messages {
		texts = append(texts, msg.Role+":"+agent.TextOf(msg.Content))
	}
	require.Contains(t, texts, "user:steered during the compaction", "injected after the compaction")
	require.Equal(t, "done: steered during the compaction", agent.TextOf(end.Messages[len(end.Messages)-1].Content))
	st, err := agentclient.State(context.Background(), c, run.GetID())
	require.NoError(t, err)
	require.Equal(t, 1, st.Compactions)

	// The next compaction is aborted: it ends aborted, nothing changes, and
	// the run ends as an aborted run does.
	after = promptUntilCompacting(t, c, run, m)
	_, err = agentclient.Abort(context.Background(), c, run.GetID(), "stop")
	require.NoError(t, err)
	end = waitAgentEnd(t, c, run, after)
	require.Equal(t, agent.StopReasonAborted, end.Messages[len(end.Messages)-1].StopReason)
	m.open()
	events, err := agentclient.Events(context.Background(), c, run.GetID(), "")
	require.NoError(t, err)
	last := compactionEnds(events)
	require.True(t, last[len(last)-1].Aborted, "the abort ended the compaction")
	st, err = agentclient.State(context.Background(), c, run.GetID())
	require.NoError(t, err)
	require.Equal(t, 1, st.Compactions, "the aborted compaction changed nothing")
}

// promptUntilCompacting closes the model's gate and prompts the session
// until a compaction's summarizer call waits at it. It returns the event
// sequence number the last prompt's run follows.
func promptUntilCompacting(t *testing.T, c client.Client, run client.WorkflowRun, m *windowModel) int64 {
	t.Helper()
	m.mu.Lock()
	m.gate = make(chan struct{})
	n := len(m.summaries)
	m.mu.Unlock()
	for i := 0; i < 60; i++ {
		var st agentapi.RunStatus
		require.NoError(t, agentclient.Update(context.Background(), c, run.GetID(), agentapi.UpdatePrompt,
			agentapi.PromptRequest{Text: fmt.Sprintf("filling %d", i)}, &st))
		for {
			m.mu.Lock()
			compacting := len(m.summaries) > n
			m.mu.Unlock()
			if compacting {
				return st.After
			}
			s, err := agentclient.State(context.Background(), c, run.GetID())
			require.NoError(t, err)
			if s.Status == "idle" {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	t.Fatal("no compaction started")
	return 0
}

// open lets the summarizer calls through.
func (w *windowModel) open() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gate != nil {
		close(w.gate)
		w.gate = nil
	}
}

// waitAgentEnd follows a session's events after a sequence number to the
// next agent_end.
func waitAgentEnd(t *testing.T, c client.Client, run client.WorkflowRun, after int64) agent.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var end agent.Event
	_ = agentclient.Watch(ctx, c, run.GetID(), "", agentclient.WatchOptions{After: after, Store: testenv.Store(t)}, func(e agent.Event) {
		if e.Type == agent.EventAgentEnd && end.Type == "" {
			end = e
			cancel()
		}
	})
	require.Equal(t, agent.EventAgentEnd, end.Type, "the run ended")
	return end
}

// A manual compaction between runs sends its instructions to the
// summarizer; one with nothing to cut is refused with the reason.
func TestManualCompact(t *testing.T) {
	m := &windowModel{window: 100000}
	c, queue := newWindowWorker(t, m)
	run := startWindowSession(t, c, queue, agentapi.SessionInput{
		LoopConfig: agent.LoopConfig{Compaction: &agent.CompactionConfig{KeepRecentTokens: 2000}},
	})
	err := agentclient.Update(context.Background(), c, run.GetID(), agentapi.UpdateCompact, agentapi.CompactRequest{}, nil)
	require.ErrorContains(t, err, "No messages to continue from")
	promptAll(t, c, run, []string{"one", "two", "three", "four"})

	var st agentapi.CompactStatus
	require.NoError(t, agentclient.Update(context.Background(), c, run.GetID(), agentapi.UpdateCompact,
		agentapi.CompactRequest{Instructions: "keep the file names"}, &st))
	require.Less(t, st.TokensAfter, st.TokensBefore)
	require.NotEmpty(t, m.summaries)
	require.Contains(t, agent.TextOf(m.summaries[0].Messages[0].Content), "Additional focus: keep the file names")

	err = agentclient.Update(context.Background(), c, run.GetID(), agentapi.UpdateCompact, agentapi.CompactRequest{}, nil)
	require.ErrorContains(t, err, "Already compacted", "nothing new since the last compaction")

	// The session goes on from the compacted context.
	promptAll(t, c, run, []string{"five"})
	state, err := agentclient.State(context.Background(), c, run.GetID())
	require.NoError(t, err)
	require.Equal(t, 1, state.Compactions)

	// A client reads the context as the model is sent it, the summary
	// first, or every message the session added.
	_, ctxMsgs, err := agentclient.Context(context.Background(), c, testenv.Store(t), run.GetID())
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(agent.TextOf(ctxMsgs[0].Content), compaction.SummaryPrefix), "the summary comes first")
	require.Equal(t, "done: five", agent.TextOf(ctxMsgs[len(ctxMsgs)-1].Content))
	full, err := agentclient.FullTranscript(context.Background(), c, testenv.Store(t), run.GetID())
	require.NoError(t, err)
	require.Len(t, full, 5*4, "five prompts, each with a call, its result and an answer")
	require.Equal(t, "one", agent.TextOf(full[0].Content))
	require.Equal(t, strings.Repeat("output line of the dump tool\n", 140), agent.TextOf(full[2].Content))
}

// cutSummary cuts the first summary request mid-stream after the provider
// billed it (cutUsage), as a dropped connection does.
type cutSummary struct {
	*windowModel
	cut atomic.Bool
}

func (c *cutSummary) Stream(ctx context.Context, req llm.Request, emit func(agent.StreamEvent)) (agent.Message, error) {
	if req.SystemPrompt == compaction.SummarizationSystemPrompt && c.cut.CompareAndSwap(false, true) {
		u := cutUsage
		return agent.Message{Role: agent.RoleAssistant, Usage: &u}, &llm.Error{Kind: llm.ErrUnavailable, Message: "stream cut", RetryAfter: 10 * time.Millisecond}
	}
	return c.windowModel.Stream(ctx, req, emit)
}

// A compaction whose summary request was cut after the provider billed it
// is retried, and the cut attempt counts: in the compaction's usage and in
// the session's, as a model turn's billed retries do.
func TestCompactionCountsBilledRetries(t *testing.T) {
	m := &cutSummary{windowModel: &windowModel{window: 100000}}
	c, queue := newWindowWorker(t, m)
	run := startWindowSession(t, c, queue, agentapi.SessionInput{
		LoopConfig: agent.LoopConfig{Compaction: &agent.CompactionConfig{KeepRecentTokens: 2000}},
	})
	promptAll(t, c, run, []string{"one", "two", "three", "four"})
	before, err := agentclient.State(context.Background(), c, run.GetID())
	require.NoError(t, err)

	require.NoError(t, agentclient.Update(context.Background(), c, run.GetID(), agentapi.UpdateCompact, agentapi.CompactRequest{}, nil))
	require.True(t, m.cut.Load(), "the first summary request was cut")
	// The retry asked for every summary the compaction needs (the history's
	// and a split turn's prefix), each answered and billed.
	require.NotEmpty(t, m.summaries)
	var summary agent.Usage
	for _, req := range m.summaries {
		n := int64(requestTokens(req))
		summary = summary.Add(agent.Usage{Input: n, Output: 10, TotalTokens: n + 10})
	}
	after, err := agentclient.State(context.Background(), c, run.GetID())
	require.NoError(t, err)
	require.Equal(t, before.Usage.Add(cutUsage).Add(summary), after.Usage, "the cut attempt and the summary both count")

	var end *agent.CompactionInfo
	events, err := agentclient.Events(context.Background(), c, run.GetID(), "")
	require.NoError(t, err)
	for _, e := range events {
		if e.Type == agent.EventCompactionEnd {
			end = e.Compaction
		}
	}
	require.NotNil(t, end)
	require.NotNil(t, end.Result)
	require.Equal(t, cutUsage.Add(summary), end.Result.Usage)
}
