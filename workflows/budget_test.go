package workflows_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

// priced answers as the scripted model does with a fixed usage per call:
// 1000 input and 100 output tokens at $0.01 each side. The first attempt
// of each turn listed in cut fails after the provider billed it: a stream
// cut mid-way with 1000 input tokens read ($0.05, so the test can tell).
type priced struct {
	m     llm.Model
	mu    sync.Mutex
	cut   map[int]bool
	calls atomic.Int32
}

var callUsage = agent.Usage{Input: 1000, Output: 100, TotalTokens: 1100,
	Cost: agent.Cost{Input: 0.01, Output: 0.01, Total: 0.02}}

var cutUsage = agent.Usage{Input: 1000, TotalTokens: 1000, Cost: agent.Cost{Input: 0.05, Total: 0.05}}

func (p *priced) Stream(ctx context.Context, req llm.Request, emit func(agent.StreamEvent)) (agent.Message, error) {
	p.calls.Add(1)
	n := 0
	for _, m := range req.Messages {
		if m.Role == agent.RoleAssistant {
			n++
		}
	}
	p.mu.Lock()
	cut := p.cut[n]
	delete(p.cut, n)
	p.mu.Unlock()
	if cut {
		u := cutUsage
		partial := agent.Message{Role: agent.RoleAssistant, Content: []agent.Content{agent.Text("half an ans")}, Usage: &u}
		return partial, &llm.Error{Kind: llm.ErrUnavailable, Message: "stream cut", RetryAfter: 10 * time.Millisecond}
	}
	msg, err := p.m.Stream(ctx, req, emit)
	u := callUsage
	msg.Usage = &u
	return msg, err
}

// pricedHarness is a harness whose model is priced, with the given turns'
// first attempts cut.
func pricedHarness(t *testing.T, script []llm.ScriptedResponse, cut []int, ts ...tools.Tool) (*harness, *priced) {
	h := newHarness(t, script, ts...)
	scripted, err := h.scripted.Model("script")
	require.NoError(t, err)
	p := &priced{m: scripted, cut: map[int]bool{}}
	for _, n := range cut {
		p.cut[n] = true
	}
	models := llm.NewRegistry()
	models.Register("test", llm.ProviderFunc(func(string) (llm.Model, error) { return p, nil }))
	h.acts.Models = models
	return h, p
}

// loopScript is n answers, each calling the named tools.
func loopScript(n int, calls ...string) []llm.ScriptedResponse {
	var s []llm.ScriptedResponse
	for i := range n {
		var blocks []agent.Content
		for j, c := range calls {
			blocks = append(blocks, agent.ToolCall(fmt.Sprintf("%s%d-%d", c, i, j), c, map[string]any{}))
		}
		s = append(s, answer(blocks...))
	}
	return s
}

func eventTypes(evs []agent.Event) []agent.EventType {
	out := make([]agent.EventType, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

// requireBudgetStop checks a run that the budget stopped before a model
// turn: the turn's events are those of a turn aborted before its model
// call, with stopReason budget and the limit in the message.
func requireBudgetStop(t *testing.T, res agentapi.AgentLoopResult, evs []agent.Event, limit string) {
	t.Helper()
	require.Equal(t, agent.StopReasonBudget, res.StopReason)
	require.Contains(t, res.ErrorMessage, "Budget exhausted: ")
	require.Contains(t, res.ErrorMessage, limit)
	n := len(evs)
	require.GreaterOrEqual(t, n, 5)
	require.Equal(t, []agent.EventType{agent.EventTurnStart, agent.EventMessageStart, agent.EventMessageEnd,
		agent.EventTurnEnd, agent.EventAgentEnd}, eventTypes(evs[n-5:]))
	last := evs[n-2].Message
	require.Equal(t, agent.StopReasonBudget, last.StopReason)
	require.Empty(t, last.Content)
	require.Equal(t, res.ErrorMessage, last.ErrorMessage)
	ms := evs[n-1].Messages
	require.Equal(t, agent.StopReasonBudget, ms[len(ms)-1].StopReason, "agent_end carries the stop")
	require.Equal(t, agent.StopReasonBudget, lastMessage(res).StopReason)
}

// maxCostUSD counts a failed attempt the provider billed, and stops
// before a turn whose input alone, at the last answer's price, would
// cross the limit.
func TestBudgetMaxCostCountsBilledRetries(t *testing.T) {
	h, p := pricedHarness(t, loopScript(5, "quick"), []int{0}, okTool("quick"))
	in := h.input("go", "quick")
	in.Budget = &agent.Budget{MaxCostUSD: 0.1}
	run := h.start(in)
	res := h.result(run)
	// Turn 1: a cut attempt ($0.05) and its retry ($0.02); turn 2: $0.02,
	// total $0.09; turn 3's input alone (about 1100 tokens at $0.00001)
	// would take it past $0.10.
	requireBudgetStop(t, res, h.events(run), "would cross maxCostUSD $0.1000")
	require.EqualValues(t, 3, p.calls.Load())
	require.InDelta(t, 0.09, res.Usage.Cost.Total, 1e-9, "the billed failed attempt counts")
	require.EqualValues(t, 1000+1100+1100, res.Usage.TotalTokens)
	require.Equal(t, 2, res.Turns)
}

// A session's budget spans its continue-as-new chain: turns and tool
// calls spent before a seam count after it. A budget stop leaves the
// session idle and usable: prompts are refused with the budget's message
// until setBudget raises it (applied once per Update ID, across seams),
// and removing it lifts every limit.
func TestBudgetSessionAcrossSeamsAndSetBudget(t *testing.T) {
	// The scripted model answers by the number of assistant messages it
	// is sent: the budget stop's message counts, so answer 2 is never
	// asked for.
	script := append(loopScript(2, "quick"), answer(text("unused")), answer(call("q3", "quick")),
		answer(text("done")), answer(text("second run")))
	h := newHarness(t, script, okTool("quick"))
	run := h.startSession(agentapi.SessionInput{
		LoopConfig:              agent.LoopConfig{Tools: []string{"quick"}, Budget: &agent.Budget{MaxTurns: 2, MaxToolCalls: 10}},
		ContinueAsNewAfterTurns: 1,
	})
	id := run.GetID()
	h.updateOnce(id, "p1", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "go"}, nil)
	evs := h.waitRunEnd(run, 1)
	end := evs[len(evs)-1].Messages
	require.Equal(t, agent.StopReasonBudget, end[len(end)-1].StopReason)
	require.Contains(t, end[len(end)-1].ErrorMessage, "2 turns have reached maxTurns 2")

	var st agentapi.RunState
	h.waitLatest(id, func(s agentapi.RunState) bool { st = s; return s.Status == "idle" })
	require.Equal(t, 2, st.Budget.Spent.Turns, "turns before the seams count")
	require.Equal(t, 2, st.Budget.Spent.ToolCalls)
	require.Equal(t, 8, *st.Budget.Remaining.ToolCalls)
	require.Contains(t, st.Budget.Exhausted, "maxTurns 2")
	require.NotEqual(t, run.GetRunID(), h.latestRun(id), "the session continued as new")

	err := h.sessionUpdate(run, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "more"}, nil)
	require.ErrorContains(t, err, "Budget exhausted: 2 turns have reached maxTurns 2. Raise or remove the budget")
	require.ErrorContains(t, h.sessionUpdate(run, agentapi.UpdateSetBudget, agent.Budget{MaxTurns: -3}, nil), "budget.maxTurns must not be negative")

	var bs agentapi.BudgetState
	h.updateOnce(id, "raise-1", agentapi.UpdateSetBudget, agent.Budget{MaxTurns: 4, MaxToolCalls: 10}, &bs)
	require.Equal(t, 2, *bs.Remaining.Turns)
	require.Empty(t, bs.Exhausted)
	h.updateOnce(id, "p2", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "more"}, nil)
	evs = h.waitRunEnd(run, 2)
	end = evs[len(evs)-1].Messages
	require.Equal(t, "done", agent.TextOf(end[len(end)-1].Content), "the raised budget lets the run finish")
	h.waitLatest(id, func(s agentapi.RunState) bool { st = s; return s.Status == "idle" && s.Budget.Spent.Turns == 4 })
	require.Equal(t, 3, st.Budget.Spent.ToolCalls)

	// The raise sent again with its ID (a client retrying) after the
	// seams changes nothing.
	h.updateOnce(id, "raise-1", agentapi.UpdateSetBudget, agent.Budget{MaxTurns: 4, MaxToolCalls: 10}, &bs)
	err = h.sessionUpdate(run, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "again"}, nil)
	require.ErrorContains(t, err, "4 turns have reached maxTurns 4")

	// Removed: no limit.
	var removed agentapi.BudgetState
	h.updateOnce(id, "remove-1", agentapi.UpdateSetBudget, agent.Budget{}, &removed)
	require.Nil(t, removed.Limits)
	h.updateOnce(id, "p3", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "again"}, nil)
	evs = h.waitRunEnd(run, 3)
	end = evs[len(evs)-1].Messages
	require.Equal(t, "second run", agent.TextOf(end[len(end)-1].Content))
}

// A budget stopped mid-run and raised by setBudget while the run is paused
// at a seam: the raise applies to the run in progress.
func TestBudgetRaisedMidRun(t *testing.T) {
	g := newGate()
	h := newHarness(t, []llm.ScriptedResponse{answer(call("w1", "wait")), answer(call("q1", "quick")), answer(text("finished"))},
		g.tool("wait"), okTool("quick"))
	in := h.input("go", "wait", "quick")
	in.Budget = &agent.Budget{MaxTurns: 1}
	run := h.start(in)
	h.waitState(run, func(s agentapi.RunState) bool { return len(s.PendingToolCalls) == 1 })
	var bs agentapi.BudgetState
	require.NoError(t, h.sessionUpdate(run, agentapi.UpdateSetBudget, agent.Budget{MaxTurns: 3}, &bs))
	require.Equal(t, 2, *bs.Remaining.Turns)
	close(g.release)
	res := h.result(run)
	require.Equal(t, agent.StopReasonStop, res.StopReason)
	require.Equal(t, 3, res.Turns)
	require.Error(t, h.sessionUpdate(run, agentapi.UpdateSetBudget, agent.Budget{MaxTurns: 5}, nil), "the run has ended")
}

// recordSessionBudget records, for the replay corpus, a session whose
// budget stops it by turns across two seams (after a billed, retried
// attempt), is raised, stops it by a refused tool call, and is removed.
func recordSessionBudget(t *testing.T) (client.Client, string) {
	h := recording(t, []llm.ScriptedResponse{
		answer(call("q0", "quick")), answer(call("q1", "quick")), answer(text("unused")),
		answer(call("a", "quick"), call("b", "quick")), answer(text("unused")), answer(text("done")),
	}, okTool("quick"))
	scripted, err := h.scripted.Model("script")
	require.NoError(t, err)
	p := &priced{m: scripted, cut: map[int]bool{0: true}}
	models := llm.NewRegistry()
	models.Register("test", llm.ProviderFunc(func(string) (llm.Model, error) { return p, nil }))
	h.acts.Models = models
	run := h.startSession(agentapi.SessionInput{
		LoopConfig:              agent.LoopConfig{Tools: []string{"quick"}, Budget: &agent.Budget{MaxTurns: 2, MaxToolCalls: 3}},
		ContinueAsNewAfterTurns: 1,
	})
	id := run.GetID()
	h.updateOnce(id, "prompt-1", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "go"}, nil)
	evs := h.waitRunEnd(run, 1)
	require.Equal(t, agent.StopReasonBudget, lastOf(evs).StopReason)
	h.updateOnce(id, "raise-1", agentapi.UpdateSetBudget, agent.Budget{MaxTurns: 10, MaxToolCalls: 3}, nil)
	h.updateOnce(id, "prompt-2", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "two calls"}, nil)
	evs = h.waitRunEnd(run, 2)
	require.Contains(t, lastOf(evs).ErrorMessage, "maxToolCalls 3")
	h.updateOnce(id, "remove-1", agentapi.UpdateSetBudget, agent.Budget{}, nil)
	h.updateOnce(id, "prompt-3", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "finish"}, nil)
	evs = h.waitRunEnd(run, 3)
	require.Equal(t, "done", agent.TextOf(lastOf(evs).Content))
	return h.c, id
}

// lastOf is the last message of the last agent_end among evs.
func lastOf(evs []agent.Event) agent.Message {
	ms := evs[len(evs)-1].Messages
	return ms[len(ms)-1]
}

// cutThenHang bills a cut first call (cutUsage), then streams nothing until
// it is stopped, as a provider that hangs does.
type cutThenHang struct{ calls atomic.Int32 }

func (c *cutThenHang) Stream(ctx context.Context, req llm.Request, emit func(agent.StreamEvent)) (agent.Message, error) {
	if c.calls.Add(1) == 1 {
		u := cutUsage
		return agent.Message{Role: agent.RoleAssistant, Usage: &u}, &llm.Error{Kind: llm.ErrUnavailable, Message: "stream cut", RetryAfter: 10 * time.Millisecond}
	}
	<-ctx.Done()
	return agent.Message{}, ctx.Err()
}

// The run's retry window closes on an attempt that is still streaming: the
// turn ends with an error (the timeout, carrying the cut attempt's
// failure, or the attempt's own deadline error, whichever the server
// records first), and what the earlier, cut attempt was billed counts
// either way: both carry it in their details.
func TestBilledRetriesCountWhenTheRetryWindowCloses(t *testing.T) {
	h := newHarness(t, nil)
	m := &cutThenHang{}
	models := llm.NewRegistry()
	models.Register("test", llm.ProviderFunc(func(string) (llm.Model, error) { return m, nil }))
	h.acts.Models = models
	in := h.input("go")
	in.ModelRetryTimeout = "5s"
	run := h.start(in)
	res := h.result(run)
	require.Equal(t, agent.StopReasonError, res.StopReason)
	require.NotEmpty(t, res.ErrorMessage)
	require.EqualValues(t, 2, m.calls.Load())
	require.Equal(t, cutUsage, res.Usage, "the cut attempt counts")
}
