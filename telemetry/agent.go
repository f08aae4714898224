package telemetry

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
)

// Tool call stages, as the agentloop.tool.stage attribute and the stage
// label of agentloop_stage_duration_seconds name them.
const (
	StagePrepare  = "prepare"
	StageExecute  = "execute"
	StageFinalize = "finalize"
	StageModel    = "model_turn"
	StageCompact  = "compact"
)

// agentInterceptor gives every model call and tool call stage a span and
// counts them. It wraps the activities, so what it records is an attempt
// that really ran: a replayed workflow runs no activity.
type agentInterceptor struct {
	interceptor.InterceptorBase
	tracer  trace.Tracer
	metrics *agentMetrics
}

func (a *agentInterceptor) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &agentActivity{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, root: a}
}

type agentActivity struct {
	interceptor.ActivityInboundInterceptorBase
	root *agentInterceptor
}

func (a *agentActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	if len(in.Args) != 1 {
		return a.Next.ExecuteActivity(ctx, in)
	}
	switch arg := deref(in.Args[0]).(type) {
	case activities.ModelTurnInput:
		return a.modelCall(ctx, in, StageModel, arg.Model, arg.Options, arg.Turn)
	case activities.CompactInput:
		return a.modelCall(ctx, in, StageCompact, arg.Model, arg.Options, 0)
	case activities.PrepareInput:
		return a.toolStage(ctx, in, StagePrepare, arg.ToolCall.Name, arg.ToolCall.ID)
	case activities.ExecuteInput:
		return a.toolStage(ctx, in, StageExecute, arg.ToolName, arg.ToolCallID)
	case activities.FinalizeInput:
		return a.toolStage(ctx, in, StageFinalize, arg.ToolCall.Name, arg.ToolCall.ID)
	}
	return a.Next.ExecuteActivity(ctx, in)
}

func deref(v any) any {
	switch p := v.(type) {
	case *activities.ModelTurnInput:
		return *p
	case *activities.CompactInput:
		return *p
	case *activities.PrepareInput:
		return *p
	case *activities.ExecuteInput:
		return *p
	case *activities.FinalizeInput:
		return *p
	}
	return v
}

// modelCall is a GenAI "chat" span (span name "chat {model}", kind
// client) with the request and response attributes of the OpenTelemetry
// GenAI semantic conventions.
func (a *agentActivity) modelCall(ctx context.Context, in *interceptor.ExecuteActivityInput, stage string, model agent.ModelRef, o agent.ModelOptions, turn int) (any, error) {
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.provider.name", model.Provider),
		attribute.String("gen_ai.system", model.Provider),
		attribute.String("gen_ai.request.model", model.ID),
		attribute.String("agentloop.stage", stage),
		attribute.Int("agentloop.attempt", int(activity.GetInfo(ctx).Attempt)),
	}
	if turn > 0 {
		attrs = append(attrs, attribute.Int("agentloop.turn", turn))
	}
	if o.MaxTokens > 0 {
		attrs = append(attrs, attribute.Int("gen_ai.request.max_tokens", o.MaxTokens))
	}
	if o.Temperature != nil {
		attrs = append(attrs, attribute.Float64("gen_ai.request.temperature", *o.Temperature))
	}
	if o.Reasoning != "" {
		attrs = append(attrs, attribute.String("agentloop.request.reasoning", o.Reasoning))
	}
	ctx, span := a.root.tracer.Start(ctx, "chat "+model.ID, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	defer span.End()
	start := time.Now()
	ret, err := a.Next.ExecuteActivity(ctx, in)
	elapsed := time.Since(start)

	var msg agent.Message
	switch out := ret.(type) {
	case activities.ModelTurnOutput:
		msg = out.Message
	case *activities.ModelTurnOutput:
		msg = out.Message
	case activities.CompactOutput:
		msg = out.Summary
	case *activities.CompactOutput:
		msg = out.Summary
	}
	outcome := string(msg.StopReason)
	if err != nil {
		msg = partialMessage(err)
		outcome = "failed"
		recordError(span, err)
	} else if outcome == "" {
		outcome = "done"
	}
	if msg.ResponseModel != "" {
		span.SetAttributes(attribute.String("gen_ai.response.model", msg.ResponseModel))
	} else if msg.Model != "" {
		span.SetAttributes(attribute.String("gen_ai.response.model", msg.Model))
	}
	if msg.ResponseID != "" {
		span.SetAttributes(attribute.String("gen_ai.response.id", msg.ResponseID))
	}
	if msg.StopReason != "" {
		span.SetAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", []string{finishReason(msg.StopReason)}))
	}
	if msg.ErrorMessage != "" {
		span.SetStatus(codes.Error, msg.ErrorMessage)
	}
	var u agent.Usage
	if msg.Usage != nil {
		u = *msg.Usage
		span.SetAttributes(
			attribute.Int64("gen_ai.usage.input_tokens", u.Input),
			attribute.Int64("gen_ai.usage.output_tokens", u.Output),
			attribute.Int64("gen_ai.usage.cache_read.input_tokens", u.CacheRead),
			attribute.Int64("gen_ai.usage.cache_creation.input_tokens", u.CacheWrite),
			attribute.Float64("agentloop.usage.cost_usd", u.Cost.Total),
		)
	}
	a.root.metrics.modelCall(ctx, stage, model, outcome, u, elapsed, err)
	return ret, err
}

// partialMessage is what a failed model call had returned, which
// activities.ModelTurn attaches to its error (usage the provider billed).
func partialMessage(err error) agent.Message {
	var app *temporal.ApplicationError
	var msg agent.Message
	if errors.As(err, &app) && app.HasDetails() {
		_ = app.Details(&msg)
	}
	return msg
}

// finishReason names a stop reason as the GenAI conventions' examples do.
func finishReason(r agent.StopReason) string {
	switch r {
	case agent.StopReasonToolUse:
		return "tool_calls"
	case agent.StopReasonAborted:
		return "cancelled"
	}
	return string(r)
}

// toolStage is a span per tool call stage: "execute_tool {name}" for the
// tool itself (gen_ai.operation.name execute_tool), "prepare_tool {name}"
// and "finalize_tool {name}" for the hooks and validation around it.
func (a *agentActivity) toolStage(ctx context.Context, in *interceptor.ExecuteActivityInput, stage, tool, callID string) (any, error) {
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.tool.name", tool),
		attribute.String("gen_ai.tool.call.id", callID),
		attribute.String("gen_ai.tool.type", "function"),
		attribute.String("agentloop.tool.stage", stage),
		attribute.Int("agentloop.attempt", int(activity.GetInfo(ctx).Attempt)),
	}
	if stage == StageExecute {
		attrs = append(attrs, attribute.String("gen_ai.operation.name", "execute_tool"))
	}
	ctx, span := a.root.tracer.Start(ctx, stage+"_tool "+tool, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	defer span.End()
	start := time.Now()
	ret, err := a.Next.ExecuteActivity(ctx, in)
	elapsed := time.Since(start)

	outcome := stageOutcome(ret)
	if err != nil {
		outcome = "failed"
		recordError(span, err)
	} else if outcome != "ok" {
		span.SetStatus(codes.Error, outcome)
	}
	span.SetAttributes(attribute.String("agentloop.tool.outcome", outcome))
	a.root.metrics.toolStage(ctx, stage, tool, outcome, elapsed)
	return ret, err
}

func recordError(span trace.Span, err error) {
	span.RecordError(err)
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() != "" {
		span.SetAttributes(attribute.String("error.type", app.Type()))
	} else {
		span.SetAttributes(attribute.String("error.type", "_OTHER"))
	}
	if !isBenign(err) {
		span.SetStatus(codes.Error, err.Error())
	}
}

// agentMetrics are the agent's own instruments; Prometheus names them
// agentloop_model_turns_total, agentloop_tokens_total,
// agentloop_cost_usd_total, agentloop_tool_calls_total,
// agentloop_stage_duration_seconds and agentloop_approvals_waiting, beside
// the GenAI conventions' gen_ai_client_token_usage and
// gen_ai_client_operation_duration_seconds.
type agentMetrics struct {
	turns, tokens, toolCalls metric.Int64Counter
	cost                     metric.Float64Counter
	stage                    metric.Float64Histogram
	genaiTokens, genaiDur    metric.Float64Histogram
}

// stageBuckets suit both tool stages (milliseconds) and model turns
// (tens of seconds).
var stageBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

func newAgentMetrics(m metric.Meter) (*agentMetrics, error) {
	var am agentMetrics
	var err error
	errs := func(e error) {
		if err == nil {
			err = e
		}
	}
	var e error
	am.turns, e = m.Int64Counter("agentloop.model.turns", metric.WithDescription("Model calls (model turns and compaction summaries) by model and outcome: a stop reason, or failed for an attempt that ended in an error"))
	errs(e)
	am.tokens, e = m.Int64Counter("agentloop.tokens", metric.WithDescription("Tokens used by model calls, by model and type (input, output, cache_read, cache_write), failed attempts the provider billed included"))
	errs(e)
	am.cost, e = m.Float64Counter("agentloop.cost.usd", metric.WithDescription("Cost of model calls in US dollars by model, from the model catalog's prices"))
	errs(e)
	am.toolCalls, e = m.Int64Counter("agentloop.tool.calls", metric.WithDescription("Tool call attempts by tool and outcome: ok, error (an error result for the model), rejected (not found, invalid or blocked before running), failed (the activity failed)"))
	errs(e)
	am.stage, e = m.Float64Histogram("agentloop.stage.duration", metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(stageBuckets...),
		metric.WithDescription("Duration of each stage attempt: model_turn, compact, and the prepare, execute and finalize stages of tool calls"))
	errs(e)
	am.genaiTokens, e = m.Float64Histogram("gen_ai.client.token.usage", metric.WithUnit("{token}"),
		metric.WithExplicitBucketBoundaries(1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304),
		metric.WithDescription("Number of input and output tokens used (GenAI semantic conventions)"))
	errs(e)
	am.genaiDur, e = m.Float64Histogram("gen_ai.client.operation.duration", metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92),
		metric.WithDescription("GenAI operation duration (GenAI semantic conventions)"))
	errs(e)
	return &am, err
}

func (m *agentMetrics) modelCall(ctx context.Context, stage string, model agent.ModelRef, outcome string, u agent.Usage, d time.Duration, err error) {
	id := attribute.String("model", model.ID)
	prov := attribute.String("provider", model.Provider)
	m.turns.Add(ctx, 1, metric.WithAttributes(id, prov, attribute.String("stage", stage), attribute.String("outcome", outcome)))
	for _, t := range []struct {
		name string
		n    int64
	}{{"input", u.Input}, {"output", u.Output}, {"cache_read", u.CacheRead}, {"cache_write", u.CacheWrite}} {
		if t.n > 0 {
			m.tokens.Add(ctx, t.n, metric.WithAttributes(id, prov, attribute.String("type", t.name)))
		}
	}
	m.cost.Add(ctx, u.Cost.Total, metric.WithAttributes(id, prov))
	m.stage.Record(ctx, d.Seconds(), metric.WithAttributes(attribute.String("stage", stage), attribute.String("name", model.ID), attribute.String("outcome", outcome)))

	genai := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.provider.name", model.Provider),
		attribute.String("gen_ai.request.model", model.ID),
	}
	if err != nil {
		var app *temporal.ApplicationError
		t := "_OTHER"
		if errors.As(err, &app) && app.Type() != "" {
			t = app.Type()
		}
		genai = append(genai, attribute.String("error.type", t))
	}
	m.genaiDur.Record(ctx, d.Seconds(), metric.WithAttributes(genai...))
	if u.Input > 0 {
		m.genaiTokens.Record(ctx, float64(u.Input), metric.WithAttributes(append(genai, attribute.String("gen_ai.token.type", "input"))...))
	}
	if u.Output > 0 {
		m.genaiTokens.Record(ctx, float64(u.Output), metric.WithAttributes(append(genai, attribute.String("gen_ai.token.type", "output"))...))
	}
}

func (m *agentMetrics) toolStage(ctx context.Context, stage, tool, outcome string, d time.Duration) {
	// A call is counted where it ends: rejected before it ran, or run.
	if stage == StageExecute || outcome == "rejected" {
		m.toolCalls.Add(ctx, 1, metric.WithAttributes(attribute.String("tool", tool), attribute.String("outcome", outcome)))
	}
	m.stage.Record(ctx, d.Seconds(), metric.WithAttributes(attribute.String("stage", stage), attribute.String("name", tool), attribute.String("outcome", outcome)))
}

// stageOutcome is a tool stage's outcome as its output says it: "rejected"
// for a call ended in preparation, "error" for an error result, else "ok".
// The SDK hands the interceptor the activity's return value or a pointer
// to it.
func stageOutcome(ret any) string {
	switch out := ret.(type) {
	case *activities.PrepareOutput:
		return stageOutcome(*out)
	case *activities.ExecuteOutput:
		return stageOutcome(*out)
	case *activities.FinalizeOutput:
		return stageOutcome(*out)
	case activities.PrepareOutput:
		if out.Immediate {
			return "rejected"
		}
	case activities.ExecuteOutput:
		if out.IsError {
			return "error"
		}
	case activities.FinalizeOutput:
		if out.IsError {
			return "error"
		}
	}
	return "ok"
}
