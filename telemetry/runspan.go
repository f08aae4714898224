package telemetry

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"maps"
	"math/rand/v2"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// The SDK's tracing interceptor starts a RunWorkflow span each time a
// workflow function starts, replay or not, and ends it when the function
// returns or its coroutines are destroyed (a cache eviction, a worker
// stopping). A run evicted twice would show three RunWorkflow spans, two of
// them cut short. runTracer replaces that span with a runSpan: its ID is
// derived from the run, so every execution of the run, on any worker, gives
// its children the same parent, and it is emitted once, by the execution
// that completes the run live (runCompletion tells which).
type runTracer struct {
	interceptor.Tracer // the contrib tracer, for every other span
	otel               trace.Tracer
	prop               propagation.TextMapPropagator
	// completed maps a run ID to the time its workflow function returned
	// live (not replaying); the run's span emits itself then.
	completed *sync.Map
}

const (
	runIDTag      = "temporalRunID"
	workflowIDTag = "temporalWorkflowID"
)

func (t *runTracer) StartSpan(opts *interceptor.TracerStartSpanOptions) (interceptor.TracerSpan, error) {
	if rs, ok := opts.Parent.(*runSpan); ok {
		// The contrib tracer knows only its own span types: hand it the
		// run span as a reference read from a header.
		ref, err := t.Tracer.UnmarshalSpan(rs.header)
		if err != nil {
			return nil, err
		}
		o := *opts
		o.Parent = ref
		opts = &o
	}
	if opts.Operation != "RunWorkflow" || opts.Tags[runIDTag] == "" {
		return t.Tracer.StartSpan(opts)
	}
	return t.newRunSpan(opts), nil
}

func (t *runTracer) newRunSpan(opts *interceptor.TracerStartSpanOptions) *runSpan {
	parent, bag := spanContextOf(opts.Parent)
	key := sha256.Sum256([]byte("RunWorkflow\x00" + opts.Tags[workflowIDTag] + "\x00" + opts.Tags[runIDTag]))
	cfg := trace.SpanContextConfig{TraceID: parent.TraceID(), TraceFlags: trace.FlagsSampled, TraceState: parent.TraceState()}
	if parent.IsValid() {
		cfg.TraceFlags = parent.TraceFlags()
	} else {
		copy(cfg.TraceID[:], key[8:24])
	}
	copy(cfg.SpanID[:], key[:8])
	s := &runSpan{
		t:      t,
		sc:     trace.NewSpanContext(cfg),
		parent: parent,
		name:   opts.Operation + ":" + opts.Name,
		start:  opts.Time,
		runID:  opts.Tags[runIDTag],
		header: map[string]string{},
	}
	for k, v := range opts.Tags {
		s.attrs = append(s.attrs, attribute.String(k, v))
	}
	ctx := trace.ContextWithSpanContext(context.Background(), s.sc)
	if bag.Len() > 0 {
		ctx = baggage.ContextWithBaggage(ctx, bag)
	}
	t.prop.Inject(ctx, propagation.MapCarrier(s.header))
	return s
}

func (t *runTracer) MarshalSpan(span interceptor.TracerSpan) (map[string]string, error) {
	if rs, ok := span.(*runSpan); ok {
		m := make(map[string]string, len(rs.header))
		maps.Copy(m, rs.header)
		return m, nil
	}
	return t.Tracer.MarshalSpan(span)
}

func (t *runTracer) GetLogger(logger log.Logger, ref interceptor.TracerSpanRef) log.Logger {
	if rs, ok := ref.(*runSpan); ok {
		return log.With(logger, "TraceID", rs.sc.TraceID(), "SpanID", rs.sc.SpanID())
	}
	return t.Tracer.GetLogger(logger, ref)
}

// runSpan is a run's RunWorkflow span until the run completes: only its
// identity, recorded nowhere.
type runSpan struct {
	t      *runTracer
	sc     trace.SpanContext
	parent trace.SpanContext
	name   string
	start  time.Time
	runID  string
	attrs  []attribute.KeyValue
	header map[string]string
}

// Finish emits the span when this execution completed the run live; an
// execution destroyed before that, or one replaying a completed run,
// emits nothing.
func (s *runSpan) Finish(opts *interceptor.TracerFinishSpanOptions) {
	end, ok := s.t.completed.LoadAndDelete(s.runID)
	if !ok {
		return
	}
	ctx := withSpanID(context.Background(), s.sc)
	if s.parent.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, s.parent)
	}
	_, span := s.t.otel.Start(ctx, s.name, trace.WithTimestamp(s.start), trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(s.attrs...))
	if opts.Error != nil {
		span.RecordError(opts.Error)
		if !isBenign(opts.Error) {
			span.SetStatus(codes.Error, opts.Error.Error())
		}
	}
	span.End(trace.WithTimestamp(end.(time.Time)))
}

func isBenign(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Category() == temporal.ApplicationErrorCategoryBenign
}

// spanContextOf reads a parent given by the SDK's tracing interceptor: the
// contrib tracer's span or span reference (both unexported), or a runSpan.
func spanContextOf(ref interceptor.TracerSpanRef) (trace.SpanContext, baggage.Baggage) {
	var bag baggage.Baggage
	if b, ok := ref.(interface{ Members() []baggage.Member }); ok {
		bag, _ = baggage.New(b.Members()...)
	}
	switch r := ref.(type) {
	case *runSpan:
		return r.sc, bag
	case interface{ SpanContext() trace.SpanContext }:
		return r.SpanContext(), bag
	case interface {
		TraceID() trace.TraceID
		SpanID() trace.SpanID
		TraceFlags() trace.TraceFlags
		TraceState() trace.TraceState
	}:
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: r.TraceID(), SpanID: r.SpanID(),
			TraceFlags: r.TraceFlags(), TraceState: r.TraceState(), Remote: true}), bag
	}
	return trace.SpanContext{}, bag
}

// runCompletion sits inside the tracing interceptor and records the runs
// whose workflow function returned live, for their runSpan to emit itself.
type runCompletion struct {
	interceptor.InterceptorBase
	completed *sync.Map
}

func (r *runCompletion) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &runCompletionInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, completed: r.completed}
}

type runCompletionInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	completed *sync.Map
}

func (r *runCompletionInbound) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	ret, err := r.Next.ExecuteWorkflow(ctx, in)
	if !workflow.IsReplaying(ctx) {
		// Telemetry only: the time never reaches workflow state.
		r.completed.Store(workflow.GetInfo(ctx).WorkflowExecution.RunID, time.Now())
	}
	return ret, err
}

// idGenerator gives a span the ID withSpanID put in its context (a run's
// span, emitted under the ID its children already name), else random IDs.
type idGenerator struct{}

type spanIDKey struct{}

func withSpanID(ctx context.Context, sc trace.SpanContext) context.Context {
	return context.WithValue(ctx, spanIDKey{}, sc)
}

func (g idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if sc, ok := ctx.Value(spanIDKey{}).(trace.SpanContext); ok {
		return sc.TraceID(), sc.SpanID()
	}
	var tid trace.TraceID
	for !tid.IsValid() {
		binary.BigEndian.PutUint64(tid[:8], rand.Uint64())
		binary.BigEndian.PutUint64(tid[8:], rand.Uint64())
	}
	return tid, g.NewSpanID(ctx, tid)
}

func (g idGenerator) NewSpanID(ctx context.Context, traceID trace.TraceID) trace.SpanID {
	if sc, ok := ctx.Value(spanIDKey{}).(trace.SpanContext); ok {
		return sc.SpanID()
	}
	var sid trace.SpanID
	for !sid.IsValid() {
		binary.BigEndian.PutUint64(sid[:], rand.Uint64())
	}
	return sid
}
