package telemetry_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/demo"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/telemetry"
	"github.com/durable-agents/agentloop/tools"
)

func TestMain(m *testing.M) {
	// No sticky cache: every workflow task replays its run's history from
	// the start, on a worker that has never seen it. No span may come twice
	// all the same.
	if os.Getenv("AGENTLOOP_OTEL_OVERHEAD") == "" {
		worker.SetStickyWorkflowCacheSize(0)
	}
	testenv.Main(m)
}

// The demo's run without its steering message: 5 model turns and 6 tool
// calls (ls, read, read; bash; edit; bash), the first bash an error result.
const (
	demoTurns     = 5
	demoToolCalls = 6
)

type rig struct {
	c     client.Client
	queue string
}

// newRig runs a worker whose client carries the given interceptors and
// metrics handler, with the scripted demo model and the real tools.
func newRig(t *testing.T, icpts []interceptor.ClientInterceptor, metrics client.MetricsHandler) *rig {
	t.Helper()
	c, err := client.NewClientFromExisting(testenv.Client(t), client.Options{
		Logger: testenv.Quiet(), Interceptors: icpts, MetricsHandler: metrics,
	})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	models := llm.NewRegistry()
	scripted := llm.NewScriptedProvider()
	s := demo.Script()
	s.ChunkDelay = 0
	scripted.Add(demo.ModelID, s)
	models.Register(llm.ScriptedProviderName, scripted)
	r := &rig{c: c, queue: "otel-" + testenv.Suffix()}
	w, err := agentworker.New(agentworker.Options{Client: c, Store: testenv.Store(t), TaskQueue: r.queue, Models: models,
		Tools: tools.NewRegistry(tools.Builtins(tools.BuiltinOptions{BashOutputDir: t.TempDir()})...)})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return r
}

// runDemo runs the demo to its end.
func (r *rig) runDemo(t *testing.T) client.WorkflowRun {
	t.Helper()
	ws := t.TempDir()
	require.NoError(t, demo.PrepareWorkspace(ws))
	in := demo.Input(ws)
	run, err := r.c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{
		ID: "otel-" + testenv.Suffix(), TaskQueue: r.queue,
	}, agentapi.AgentLoopWorkflow, in)
	require.NoError(t, err)
	res := testenv.Result(t, run, 2*time.Minute)
	require.NotEmpty(t, res.Messages)
	require.Equal(t, agent.StopReasonStop, res.Messages[len(res.Messages)-1].StopReason, "the demo ran to its end")
	return run
}

// workflowTasks counts the run's workflow tasks: each one after the first
// replayed the history before it.
func workflowTasks(t *testing.T, c client.Client, run client.WorkflowRun) int {
	t.Helper()
	h, err := testenv.History(context.Background(), c, run.GetID(), run.GetRunID())
	require.NoError(t, err)
	n := 0
	for _, e := range h.GetEvents() {
		if e.GetWorkflowTaskCompletedEventAttributes() != nil {
			n++
		}
	}
	return n
}

func TestSpansOnceAcrossReplays(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tel, err := telemetry.Setup(context.Background(), telemetry.Options{ServiceName: "agentloop-test", SpanProcessor: rec})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	r := newRig(t, tel.Interceptors(), nil)
	run := r.runDemo(t)
	tasks := workflowTasks(t, r.c, run)
	require.Greater(t, tasks, 3, "the run took several workflow tasks, each a replay")

	names := map[string]int{}
	ids := map[string]bool{}
	traces := map[string]bool{}
	spans := rec.Ended()
	for _, s := range spans {
		names[s.Name()]++
		ids[s.SpanContext().SpanID().String()] = true
		traces[s.SpanContext().TraceID().String()] = true
	}
	t.Logf("%d workflow tasks, %d spans: %v", tasks, len(spans), names)
	require.Len(t, traces, 1, "one trace")
	require.Equal(t, 1, names["StartWorkflow:AgentLoop"])
	require.Equal(t, 1, names["RunWorkflow:AgentLoop"])
	require.Equal(t, 1, names["StartActivity:ResolveRun"])
	for _, n := range []string{"StartActivity:ModelTurn", "RunActivity:ModelTurn", "chat " + demo.ModelID} {
		require.Equal(t, demoTurns, names[n], n)
	}
	// PrepareToolCall runs only for runs with beforeToolCall hooks (the
	// model turn prepares the calls of the others), FinalizeToolCall only
	// for runs with afterToolCall hooks.
	require.Equal(t, demoToolCalls, names["StartActivity:ExecuteToolCall"])
	require.Equal(t, demoToolCalls, names["RunActivity:ExecuteToolCall"])
	require.Zero(t, names["StartActivity:PrepareToolCall"])
	stages := map[string]int{}
	for n, k := range names {
		if stage, _, ok := strings.Cut(n, "_tool "); ok {
			stages[stage] += k
		}
	}
	require.Equal(t, map[string]int{"execute": demoToolCalls}, stages)
	for _, s := range spans {
		if s.Name() == "StartWorkflow:AgentLoop" {
			require.False(t, s.Parent().IsValid(), "the starter's span is the root")
			continue
		}
		require.True(t, ids[s.Parent().SpanID().String()], "the parent of %s was emitted", s.Name())
	}
}

// The SDK's interceptor alone, in the same conditions, starts a
// RunWorkflow span per workflow task: what TestSpansOnceAcrossReplays
// shows telemetry does not.
func TestSDKInterceptorAloneRepeatsRunWorkflow(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tel, err := telemetry.Setup(context.Background(), telemetry.Options{ServiceName: "agentloop-test", SpanProcessor: rec})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	plain, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{Tracer: tel.Tracer("go.temporal.io/sdk")})
	require.NoError(t, err)
	r := newRig(t, []interceptor.ClientInterceptor{plain}, nil)
	run := r.runDemo(t)
	tasks := workflowTasks(t, r.c, run)
	n := 0
	for _, s := range rec.Ended() {
		if s.Name() == "RunWorkflow:AgentLoop" {
			n++
		}
	}
	t.Logf("%d workflow tasks, %d RunWorkflow spans", tasks, n)
	require.Greater(t, n, 1, "RunWorkflow spans again at replays")
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
