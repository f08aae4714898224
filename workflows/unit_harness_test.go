package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/workflows"
)

// The fast layer: the real workflows on the SDK's TestWorkflowEnvironment,
// with no server, the activities mocked with the results the real ones
// give. Its tests are named TestUnit... so that `go test ./workflows -run
// '^TestUnit'` runs them alone, in seconds. The dev-server tests stay for
// what only a server shows: Updates over the wire, replay, crashes and the
// conformance traces.

// acts names the activities for OnActivity: the workflows call them as
// methods of a nil *activities.Activities, and the mocks stand in for them.
var acts *activities.Activities

// unitRun is a run on the test environment: a scripted model, tools with
// the behaviour each test gives them, and a record of what ran.
type unitRun struct {
	t   *testing.T
	env *testsuite.TestWorkflowEnvironment

	mu      sync.Mutex
	answers [][]agent.Content   // the model's answers, turn by turn
	usage   agent.Usage         // what each model call bills
	retried map[int]agent.Usage // by turn: what the turn's failed attempts billed
	// failModel, when set, is how every model turn fails; block, when
	// set, is a beforeToolCall hook: a reason blocks the call.
	failModel error
	block     func(agent.Content) string
	tools     map[string]unitTool
	timing    map[string]callTiming
	// watched is what every model turn says of the watch lease
	// (ModelTurnOutput.Watched).
	watched bool
	// modelTurns and executed record the activities the run called.
	resolved   []activities.ResolveRunInput
	modelTurns []activities.ModelTurnInput
	executed   []activities.ExecuteInput
	// unanswered counts the Updates sent that were neither refused nor
	// completed: a test ends with none.
	unanswered int
	// eachRun, when set, is called as chain starts each workflow run
	// (from 1), to drive it.
	eachRun func(run int)
	// notRun counts the delayed callbacks not run yet.
	notRun int
}

// unitTool is a mocked tool: its scheduling info and its behaviour.
type unitTool struct {
	info activities.ToolInfo
	run  func(activities.ExecuteInput) (activities.ExecuteOutput, error)
}

// newUnitRun is a test environment with the real workflows registered and
// the model, prepare, execute and finalize activities mocked.
func newUnitRun(t *testing.T, answers ...[]agent.Content) *unitRun {
	t.Helper()
	r := &unitRun{t: t, answers: answers, tools: map[string]unitTool{}, timing: map[string]callTiming{},
		usage: agent.Usage{Input: 100, Output: 10, TotalTokens: 110, Cost: agent.Cost{Input: 0.001, Output: 0.001, Total: 0.002}}}
	t.Cleanup(func() {
		if r.unanswered != 0 {
			t.Errorf("%d Updates were never answered", r.unanswered)
		}
		if r.notRun != 0 {
			t.Errorf("%d delayed callbacks never ran: the run ended first", r.notRun)
		}
	})
	r.newEnv()
	return r
}

// newEnv starts a test environment, as a worker would start a workflow
// run: the real workflows, the model, prepare and finalize mocked (the
// tools are mocked when the run starts: mockTools).
func (r *unitRun) newEnv() {
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(quietLogger{})
	env := suite.NewTestWorkflowEnvironment()
	workflows.RegisterWorkflows(env)
	env.OnActivity(acts.ResolveRun, mock.Anything, mock.Anything).Return(r.resolve)
	env.OnActivity(acts.ModelTurn, mock.Anything, mock.Anything).Return(r.modelTurn)
	env.OnActivity(acts.PrepareToolCall, mock.Anything, mock.Anything).Return(r.prepare)
	env.OnActivity(acts.FinalizeToolCall, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.FinalizeInput) (activities.FinalizeOutput, error) {
			return activities.FinalizeOutput{Result: in.Result, IsError: in.IsError}, nil
		})
	r.env = env
}

// tool adds a tool that answers "<name> done", having run as long as
// timing says for the call.
func (r *unitRun) tool(name string) *unitRun {
	return r.toolFunc(name, func(in activities.ExecuteInput) (activities.ExecuteOutput, error) {
		return activities.ExecuteOutput{Result: agent.TextResult(name + " done"), Duration: r.timing[in.ToolCallID].ran}, nil
	})
}

// toolFunc adds a tool with its own behaviour.
func (r *unitRun) toolFunc(name string, run func(activities.ExecuteInput) (activities.ExecuteOutput, error)) *unitRun {
	r.tools[name] = unitTool{info: activities.ToolInfo{Name: name}, run: run}
	return r
}

// took says that a call ran for ran (what the tool reports) and that its
// result reached the workflow arrives after the call was scheduled, on the
// workflow's clock: later than ran when it waited for a worker.
func (r *unitRun) took(callID string, ran, arrives time.Duration) *unitRun {
	r.timing[callID] = callTiming{ran: ran, arrives: arrives}
	return r
}

// callTiming is a tool call's duration and when its result arrives.
type callTiming struct{ ran, arrives time.Duration }

// mockTools mocks ExecuteToolCall: a mock for each timed call that
// answers when the workflow's clock has advanced by its arrival, then one
// for every other call. A call run after an abort (Aborted: its context
// is cancelled from the start) answers at once.
func (r *unitRun) mockTools() {
	for id, tm := range r.timing {
		isCall := mock.MatchedBy(func(in activities.ExecuteInput) bool { return in.ToolCallID == id && !in.Aborted })
		r.env.OnActivity(acts.ExecuteToolCall, mock.Anything, isCall).Return(r.execute).After(tm.arrives)
	}
	r.env.OnActivity(acts.ExecuteToolCall, mock.Anything, mock.Anything).Return(r.execute)
}

// withInfo changes a tool's scheduling info (execution mode, read-only).
func (r *unitRun) withInfo(name string, change func(*activities.ToolInfo)) *unitRun {
	t := r.tools[name]
	change(&t.info)
	r.tools[name] = t
	return r
}

// input is a run of the scripted model with the named tools.
func (r *unitRun) input(prompt string, tools ...string) agentapi.AgentLoopInput {
	return agentapi.AgentLoopInput{
		LoopConfig: agent.LoopConfig{Model: agent.ModelRef{Provider: "test", ID: "script"}, Tools: tools},
		Prompt:     prompt,
	}
}

// run executes AgentLoop to its end and returns its result and events.
func (r *unitRun) run(in agentapi.AgentLoopInput) (agentapi.AgentLoopResult, []agent.Event) {
	r.t.Helper()
	r.mockTools()
	r.env.ExecuteWorkflow(agentapi.AgentLoopWorkflow, in)
	require.True(r.t, r.env.IsWorkflowCompleted())
	require.NoError(r.t, r.env.GetWorkflowError())
	var res agentapi.AgentLoopResult
	require.NoError(r.t, r.env.GetWorkflowResult(&res))
	return res, r.events()
}

// chain executes AgentLoop and every workflow run it continues as new
// into, each on a fresh environment as on another worker, and returns the
// last run's result, the events of all runs, and the inputs each run
// after the first started with.
func (r *unitRun) chain(in agentapi.AgentLoopInput) (agentapi.AgentLoopResult, []agent.Event, []agentapi.AgentLoopInput) {
	r.t.Helper()
	var evs []agent.Event
	var next []agentapi.AgentLoopInput
	for {
		if r.eachRun != nil {
			r.eachRun(len(next) + 1)
		}
		r.mockTools()
		r.env.ExecuteWorkflow(agentapi.AgentLoopWorkflow, in)
		require.True(r.t, r.env.IsWorkflowCompleted())
		evs = append(evs, r.events()...)
		var cont *workflow.ContinueAsNewError
		if err := r.env.GetWorkflowError(); errors.As(err, &cont) {
			require.Equal(r.t, agentapi.AgentLoopWorkflow, cont.WorkflowType.Name)
			in = agentapi.AgentLoopInput{}
			require.NoError(r.t, converter.GetDefaultDataConverter().FromPayloads(cont.Input, &in))
			next = append(next, in)
			r.newEnv()
			continue
		}
		require.NoError(r.t, r.env.GetWorkflowError())
		var res agentapi.AgentLoopResult
		require.NoError(r.t, r.env.GetWorkflowResult(&res))
		return res, evs, next
	}
}

// session runs AgentSession until the workflow's clock reaches end, when
// it is cancelled (a session waits for prompts for ever), and returns its
// events.
func (r *unitRun) session(in agentapi.SessionInput, end time.Duration) []agent.Event {
	r.t.Helper()
	if in.Model.Provider == "" {
		in.Model = agent.ModelRef{Provider: "test", ID: "script"}
	}
	r.at(end, func() { r.env.CancelWorkflow() })
	r.mockTools()
	r.env.ExecuteWorkflow(agentapi.SessionWorkflow, in)
	require.True(r.t, r.env.IsWorkflowCompleted())
	var cancelled *temporal.CanceledError
	require.True(r.t, errors.As(r.env.GetWorkflowError(), &cancelled), "%v", r.env.GetWorkflowError())
	return r.events()
}

// events reads the run's durable event log with QueryEvents.
func (r *unitRun) events() []agent.Event {
	r.t.Helper()
	v, err := r.env.QueryWorkflow(agentapi.QueryEvents, agentapi.EventsQuery{})
	require.NoError(r.t, err)
	var page agentapi.EventsPage
	require.NoError(r.t, v.Get(&page))
	require.Equal(r.t, page.Last-page.First+1, int64(len(page.Events)), "one page holds the whole log")
	return page.Events
}

// state reads QueryState.
func (r *unitRun) state() agentapi.RunState {
	r.t.Helper()
	v, err := r.env.QueryWorkflow(agentapi.QueryState)
	require.NoError(r.t, err)
	var st agentapi.RunState
	require.NoError(r.t, v.Get(&st))
	return st
}

// at runs fn when the workflow's clock has advanced by d; the run must
// still be going then (a test ends with every callback run).
func (r *unitRun) at(d time.Duration, fn func()) {
	r.notRun++
	r.env.RegisterDelayedCallback(func() {
		r.notRun--
		fn()
	}, d)
}

func (r *unitRun) resolve(_ context.Context, in activities.ResolveRunInput) (activities.ResolveRunOutput, error) {
	r.mu.Lock()
	r.resolved = append(r.resolved, in)
	r.mu.Unlock()
	out := activities.ResolveRunOutput{Tools: []activities.ToolInfo{}}
	if in.Model.Provider != "test" {
		return out, temporal.NewNonRetryableApplicationError(fmt.Sprintf("unknown model provider %q", in.Model.Provider), "ConfigError", nil)
	}
	for _, name := range in.Tools {
		t, ok := r.tools[name]
		if !ok {
			return out, temporal.NewNonRetryableApplicationError(fmt.Sprintf("unknown tool %q", name), "ConfigError", nil)
		}
		out.Tools = append(out.Tools, t.info)
	}
	return out, nil
}

// modelTurn answers with the next scripted answer, as the scripted model
// does: stopReason toolUse when it calls tools, stop otherwise.
func (r *unitRun) modelTurn(_ context.Context, in activities.ModelTurnInput) (activities.ModelTurnOutput, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.modelTurns = append(r.modelTurns, in)
	n := len(r.modelTurns)
	if r.failModel != nil {
		return activities.ModelTurnOutput{}, r.failModel
	}
	if n > len(r.answers) {
		return activities.ModelTurnOutput{}, fmt.Errorf("the script has %d answers; turn %d asked for another", len(r.answers), n)
	}
	u := r.usage
	m := agent.Message{Role: agent.RoleAssistant, Content: r.answers[n-1], API: "scripted", Provider: in.Model.Provider,
		Model: in.Model.ID, Usage: &u, StopReason: agent.StopReasonStop, Timestamp: int64(n)}
	if len(m.ToolCalls()) > 0 {
		m.StopReason = agent.StopReasonToolUse
	}
	out := activities.ModelTurnOutput{Message: m, Watched: r.watched}
	if u, ok := r.retried[n]; ok {
		out.Retried = &u
	}
	return out, nil
}

// prepare validates nothing: every call's arguments are its arguments,
// unless the block hook blocks the call.
func (r *unitRun) prepare(_ context.Context, in activities.PrepareInput) (activities.PrepareOutput, error) {
	if r.block != nil && len(in.BeforeToolCall) > 0 {
		if why := r.block(in.ToolCall); why != "" {
			return activities.PrepareOutput{Immediate: true, IsError: true, Result: agent.ErrorResult(why)}, nil
		}
	}
	args := in.ToolCall.Arguments
	if args == nil {
		args = map[string]any{}
	}
	return activities.PrepareOutput{Args: args}, nil
}

func (r *unitRun) execute(_ context.Context, in activities.ExecuteInput) (activities.ExecuteOutput, error) {
	r.mu.Lock()
	r.executed = append(r.executed, in)
	t := r.tools[in.ToolName]
	r.mu.Unlock()
	return t.run(in)
}

// executedIDs lists the tool calls that ran, in the order they ran.
func (r *unitRun) executedIDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for _, in := range r.executed {
		ids = append(ids, in.ToolCallID)
	}
	return ids
}

// calls is an answer calling the named tools, with ids <name>-<turn>-<i>.
func calls(turn int, names ...string) []agent.Content {
	var blocks []agent.Content
	for i, n := range names {
		blocks = append(blocks, agent.ToolCall(fmt.Sprintf("%s-%d-%d", n, turn, i), n, map[string]any{}))
	}
	return blocks
}

func says(s string) []agent.Content { return []agent.Content{agent.Text(s)} }

// quietLogger drops the SDK's logs: the tests assert on events instead.
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}
