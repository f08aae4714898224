package workflows_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/workflows"
)

// Histories recorded from real servers must replay against the current
// workflow code: a change that alters the commands of a running history
// fails here before it reaches a deployment. The corpus holds the 22
// conformance scenarios' runs (go test ./conformance -update-histories),
// sessions and long runs of every kind production runs (go test ./workflows
// -run TestRecordHistories -record-histories) and the crash tests' lost,
// interrupted and upgraded runs (internal/harness/crashtest, CRASHTEST_SAVE_HISTORY),
// and abort-wins-over-failure.json, a run of llm's
// TestWorkflowAbortWinsOverAFailureInFlight saved once with
// testenv.SaveHistory (the abort-wins-over-failure marker).
func TestReplayRecordedHistories(t *testing.T) {
	files := histories(t)
	byType := map[string]int{}
	for _, f := range files {
		byType[workflowType(t, f)]++
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			workflows.RegisterWorkflows(r)
			require.NoError(t, replayFile(t, r, f))
		})
	}
	t.Logf("replayed %d histories: %v", len(files), byType)
	require.NotZero(t, byType[agentapi.AgentLoopWorkflow])
	require.NotZero(t, byType[agentapi.SessionWorkflow])
}

// The replay test must catch an unversioned change to either workflow: a
// timer before everything else (every history of the type fails), and a
// timer before every model turn, deep in the run (every history with a
// model turn fails).
func TestReplayCatchesNondeterministicChange(t *testing.T) {
	loop := func(ctx workflow.Context, in agentapi.AgentLoopInput) (agentapi.AgentLoopResult, error) {
		if err := workflow.Sleep(ctx, time.Second); err != nil {
			return agentapi.AgentLoopResult{}, err
		}
		return workflows.AgentLoop(ctx, in)
	}
	session := func(ctx workflow.Context, in agentapi.SessionInput) (agentapi.SessionResult, error) {
		if err := workflow.Sleep(ctx, time.Second); err != nil {
			return agentapi.SessionResult{}, err
		}
		return workflows.AgentSession(ctx, in)
	}
	atStart := map[string]any{agentapi.AgentLoopWorkflow: loop, agentapi.SessionWorkflow: session}
	for _, typ := range []string{agentapi.AgentLoopWorkflow, agentapi.SessionWorkflow} {
		t.Run(typ+" at the start", func(t *testing.T) {
			n := 0
			for _, f := range histories(t) {
				if workflowType(t, f) != typ {
					continue
				}
				r := worker.NewWorkflowReplayer()
				r.RegisterWorkflowWithOptions(atStart[typ], workflow.RegisterOptions{Name: typ})
				requireNondeterministic(t, r, f)
				n++
			}
			require.NotZero(t, n)
		})
		t.Run(typ+" before every model turn", func(t *testing.T) {
			n := 0
			for _, f := range histories(t) {
				if workflowType(t, f) != typ || !strings.Contains(readFile(t, f), `"ModelTurn"`) {
					continue
				}
				r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{
					Interceptors: []interceptor.WorkerInterceptor{&sleepBeforeModelTurns{}},
				})
				require.NoError(t, err)
				workflows.RegisterWorkflows(r)
				requireNondeterministic(t, r, f)
				n++
			}
			require.NotZero(t, n)
		})
	}
}

func requireNondeterministic(t *testing.T, r worker.WorkflowReplayer, f string) {
	t.Helper()
	err := replayFile(t, r, f)
	require.Error(t, err, filepath.Base(f))
	// TMPRL1100 is the SDK's code for a nondeterminism error.
	require.Contains(t, err.Error(), "TMPRL1100", filepath.Base(f))
}

// sleepBeforeModelTurns is an unversioned change deep in the workflows: a
// one-second timer before every ModelTurn activity.
type sleepBeforeModelTurns struct {
	interceptor.WorkerInterceptorBase
}

func (*sleepBeforeModelTurns) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &sleepInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}}
}

type sleepInbound struct {
	interceptor.WorkflowInboundInterceptorBase
}

func (s *sleepInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return s.Next.Init(&sleepOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}})
}

type sleepOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
}

func (s *sleepOutbound) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	if activityType == "ModelTurn" {
		_ = s.Next.Sleep(ctx, time.Second)
	}
	return s.Next.ExecuteActivity(ctx, activityType, args...)
}

// replayFile replays a recorded history as the workflow that recorded it.
// The replayer's default workflow id is "ReplayId", and a sub-agent's
// child workflow id begins with its parent's (workflows/subagent.go): the
// SDK matches child workflow commands by id, so a parent's history replays
// under its own id, which its first child's id gives.
func replayFile(t *testing.T, r worker.WorkflowReplayer, path string) error {
	t.Helper()
	h := historyFile(t, path)
	var opts worker.ReplayWorkflowHistoryOptions
	for _, e := range h.GetEvents() {
		if a := e.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil {
			if m := childID.FindStringSubmatch(a.GetWorkflowId()); m != nil {
				opts.OriginalExecution = workflow.Execution{ID: m[1]}
				break
			}
		}
	}
	return r.ReplayWorkflowHistoryWithOptions(testenv.Quiet(), h, opts)
}

var childID = regexp.MustCompile(`^(.*)/task-\d+-\d+-`)

func histories(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "histories", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "record histories with: go test ./conformance -run TestConformance -update-histories")
	return files
}

// workflowType is the workflow type a history file records.
func workflowType(t *testing.T, path string) string {
	t.Helper()
	return historyFile(t, path).GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowType().GetName()
}

// historyFile reads a recorded history, as the Temporal CLI writes it.
func historyFile(t *testing.T, path string) *historypb.History {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	require.NoError(t, f.Close())
	require.NoError(t, err, path)
	return h
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
