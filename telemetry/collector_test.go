package telemetry_test

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/durable-agents/agentloop/demo"
	"github.com/durable-agents/agentloop/internal/harness/jaeger"
	"github.com/durable-agents/agentloop/internal/harness/otlpsink"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/telemetry"
)

// One demo run exporting over OTLP/HTTP as the OTEL_EXPORTER_OTLP_*
// variables say, to a receiver speaking the protocol's wire format: the
// worker and the starter (here one client) send one trace with the
// expected tree. The worker's Prometheus endpoint then shows the agent's
// and the SDK's metrics. TestOneTraceInJaegerAndMetrics does the same
// against a real Jaeger where one is installed (scripts/demo --traces
// builds it; scripts/test leaves it out, its build alone is 7 CPU-minutes).
func TestOneTraceOverOTLPAndMetrics(t *testing.T) {
	sink := otlpsink.Start()
	t.Cleanup(sink.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tel, _, sent := tracedDemo(ctx, t, sink.Endpoint)
	var got []otlpsink.Span
	for {
		got = sink.Spans()
		if len(got) >= sent {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the receiver has %d spans, not the %d sent", len(got), sent)
		case <-time.After(100 * time.Millisecond):
		}
	}
	require.Len(t, got, sent)
	var spans []span
	for _, s := range got {
		require.Equal(t, got[0].TraceID, s.TraceID, "one trace")
		spans = append(spans, span{id: s.SpanID, parent: s.ParentID, name: s.Name, attrs: s.Attributes})
	}
	checkTree(t, got[0].TraceID, spans)
	checkMetrics(t, tel.MetricsURL)
}

// The same run against a real Jaeger, read back from its query API.
func TestOneTraceInJaegerAndMetrics(t *testing.T) {
	bin, err := jaeger.Find()
	if err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	j, err := jaeger.Start(ctx, bin, t.TempDir(), testWriter{t})
	require.NoError(t, err)
	t.Cleanup(j.Stop)
	tel, service, sent := tracedDemo(ctx, t, j.OTLPEndpoint)
	var tr jaeger.Trace
	for {
		traces, err := j.Traces(ctx, service, 10)
		require.NoError(t, err)
		require.LessOrEqual(t, len(traces), 1, "one trace")
		if len(traces) == 1 && len(traces[0].Spans) == sent {
			tr = traces[0]
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("Jaeger has %d traces, not the %d spans sent", len(traces), sent)
		case <-time.After(100 * time.Millisecond):
		}
	}
	var spans []span
	for _, s := range tr.Spans {
		attrs := map[string]any{}
		for _, kv := range s.Tags {
			attrs[kv.Key] = kv.Value
		}
		spans = append(spans, span{id: s.SpanID, parent: s.Parent(), name: s.OperationName, attrs: attrs})
	}
	checkTree(t, tr.TraceID, spans)
	checkMetrics(t, tel.MetricsURL)
}

// tracedDemo runs the demo with telemetry exporting to endpoint and
// returns the telemetry, its service name and the number of spans it sent.
func tracedDemo(ctx context.Context, t *testing.T, endpoint string) (*telemetry.Telemetry, string, int) {
	service := "agentloop-test-" + testenv.Suffix()
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}
	// The recorder counts what was sent, for the reader to wait for all of it.
	rec := tracetest.NewSpanRecorder()
	tel, err := telemetry.Setup(ctx, telemetry.Options{
		ServiceName: service, MetricsAddr: "127.0.0.1:0", SpanProcessor: rec,
		Getenv: func(k string) string { return env[k] },
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	require.Contains(t, tel.Describe(), "OTLP http/protobuf "+endpoint)
	r := newRig(t, tel.Interceptors(), tel.MetricsHandler())
	require.NoError(t, tel.ObserveApprovals(r.c, "default"))
	r.runDemo(t)
	require.NoError(t, tel.ForceFlush(ctx))
	return tel, service, len(rec.Ended())
}

// span is a span as either reader returns it.
type span struct {
	id, parent, name string
	attrs            map[string]any
}

// checkTree checks the trace's tree: StartWorkflow, RunWorkflow under it,
// every activity scheduled from RunWorkflow and run under its scheduling,
// the GenAI and tool stage spans under their activity.
func checkTree(t *testing.T, traceID string, spans []span) {
	byID := map[string]span{}
	for _, s := range spans {
		byID[s.id] = s
	}
	counts := map[string]int{}
	for _, s := range spans {
		counts[s.name]++
		name, p := s.name, byID[s.parent].name
		switch {
		case name == "StartWorkflow:AgentLoop":
			require.Empty(t, strings.Trim(s.parent, "0"), "the root")
		case name == "RunWorkflow:AgentLoop":
			require.Equal(t, "StartWorkflow:AgentLoop", p)
		case strings.HasPrefix(name, "StartActivity:"):
			require.Equal(t, "RunWorkflow:AgentLoop", p, name)
		case strings.HasPrefix(name, "RunActivity:"):
			require.Equal(t, "StartActivity:"+strings.TrimPrefix(name, "RunActivity:"), p, name)
		case name == "chat "+demo.ModelID:
			require.Equal(t, "RunActivity:ModelTurn", p)
			for k, want := range map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "scripted", "gen_ai.request.model": demo.ModelID} {
				v, ok := s.attrs[k]
				require.True(t, ok, k)
				require.Equal(t, want, v, k)
			}
			for _, k := range []string{"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.response.finish_reasons"} {
				require.Contains(t, s.attrs, k)
			}
		case strings.HasPrefix(name, "prepare_tool "):
			require.Equal(t, "RunActivity:PrepareToolCall", p, name)
		case strings.HasPrefix(name, "execute_tool "):
			require.Equal(t, "RunActivity:ExecuteToolCall", p, name)
			require.Equal(t, strings.TrimPrefix(name, "execute_tool "), s.attrs["gen_ai.tool.name"])
		default:
			t.Errorf("unexpected span %s under %s", name, p)
		}
	}
	require.Equal(t, 1, counts["RunWorkflow:AgentLoop"])
	require.Equal(t, demoTurns, counts["chat "+demo.ModelID])
	require.Equal(t, 2, counts["execute_tool bash"])
	t.Logf("trace %s: %d spans: %v", traceID, len(spans), counts)
}

// checkMetrics scrapes the worker's endpoint as Prometheus does.
func checkMetrics(t *testing.T, url string) {
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	samples := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		require.NoError(t, err, line)
		samples[line[:i]] += v
	}
	require.NoError(t, sc.Err())
	sum := func(prefix string, labels ...string) float64 {
		total := 0.0
	next:
		for k, v := range samples {
			if !strings.HasPrefix(k, prefix+"{") && k != prefix {
				continue
			}
			for _, l := range labels {
				if !strings.Contains(k, l) {
					continue next
				}
			}
			total += v
		}
		return total
	}
	model := `model="` + demo.ModelID + `"`
	require.Equal(t, float64(demoTurns), sum("agentloop_model_turns_total", model, `stage="model_turn"`))
	require.Equal(t, 1.0, sum("agentloop_model_turns_total", model, `outcome="stop"`))
	require.Greater(t, sum("agentloop_tokens_total", model, `type="input"`), 0.0)
	require.Greater(t, sum("agentloop_tokens_total", model, `type="output"`), 0.0)
	require.Contains(t, samples, `agentloop_cost_usd_total{model="demo",provider="scripted"}`)
	require.Equal(t, 1.0, sum("agentloop_tool_calls_total", `tool="bash"`, `outcome="error"`), "the failing test")
	require.Equal(t, 1.0, sum("agentloop_tool_calls_total", `tool="bash"`, `outcome="ok"`))
	require.Equal(t, float64(demoToolCalls), sum("agentloop_tool_calls_total"))
	require.Equal(t, float64(demoToolCalls), sum("agentloop_stage_duration_seconds_count", `stage="execute"`))
	require.Equal(t, float64(demoTurns), sum("agentloop_stage_duration_seconds_count", `stage="model_turn"`))
	require.Equal(t, float64(demoTurns), sum("gen_ai_client_operation_duration_seconds_count", `gen_ai_operation_name="chat"`))
	require.Greater(t, sum("gen_ai_client_token_usage_count"), 0.0)
	require.Contains(t, samples, "agentloop_approvals_waiting")
	// The SDK's own: workflow tasks (each a replay here) and activity polls.
	require.Greater(t, sum("temporal_workflow_task_replay_latency_seconds_count"), 0.0)
	require.Greater(t, sum("temporal_activity_execution_latency_seconds_count", `activity_type="ModelTurn"`), 0.0)
}
