package activities

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
)

// A deploy stops workers with SIGTERM. The worker stops polling at once,
// lets the activities it runs go on for a grace period (the worker's
// -stop-timeout), and then interrupts those still running: their context
// is cancelled with ErrWorkerShutdown as its cause, which the model
// providers (llm) and the tools (tools.ShuttingDown) tell apart from the
// run's abort, and the activity fails with the retryable ErrShutdown type
// and no retry delay, so another worker takes the attempt over at once
// instead of after the 30 s heartbeat timeout. A single-attempt tool is
// not retried: the workflow reports it interrupted (workflows/lost.go).

// ErrShutdown is the ApplicationError type of an attempt its worker
// interrupted while shutting down. It is retryable.
const ErrShutdown = "WorkerShutdown"

// shutdownRetryDelay is the retry delay of an interrupted attempt: as soon
// as the server can hand it to another worker.
const shutdownRetryDelay = time.Millisecond

// ErrWorkerShutdown is the context cause of an interrupted attempt.
var ErrWorkerShutdown error = workerShutdown{}

type workerShutdown struct{}

func (workerShutdown) Error() string { return "the worker is shutting down" }

// WorkerShutdown tells llm and tools that this cancellation is a shutdown,
// not an abort.
func (workerShutdown) WorkerShutdown() bool { return true }

// shutdown is the worker's stop: closed when the grace period of the
// activities in flight has ended.
type shutdown struct {
	once, closed sync.Once
	interrupt    chan struct{}
}

func (s *shutdown) init() {
	s.once.Do(func() { s.interrupt = make(chan struct{}) })
}

// BeginShutdown tells a worker's activities that the worker is stopping:
// those in flight may go on for grace, then they are interrupted. The
// worker calls it when it receives SIGTERM, before stopping its Temporal
// workers (whose WorkerStopTimeout must exceed grace by the time an
// interrupted attempt takes to report: see ShutdownReportMargin). It
// returns at once. (A function, not a method: every exported method of
// Activities is registered as an activity.)
func BeginShutdown(a *Activities, grace time.Duration) {
	a.stop.init()
	go func() {
		time.Sleep(grace)
		a.stop.closeOnce()
	}()
}

// ShutdownReportMargin is how long an interrupted attempt may take to end
// and report after its grace: bash gives a command's process group
// tools.BashKillGrace between SIGTERM and SIGKILL, the journal records the
// interruption, and the failure goes to the server.
const ShutdownReportMargin = 5 * time.Second

func (s *shutdown) closeOnce() { s.closed.Do(func() { close(s.interrupt) }) }

// interruptible returns the context an activity works under: the
// activity's own (deadline, values, cancellation by an abort), except that
// the end of the worker's grace period, or the SDK's own cancellation when
// the worker stops (worker.ErrWorkerShutdown), cancel it with
// ErrWorkerShutdown as the cause.
func (a *Activities) interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	a.stop.init()
	base, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	work, stopDeadline := base, context.CancelFunc(func() {})
	if d, ok := ctx.Deadline(); ok {
		work, stopDeadline = context.WithDeadline(base, d)
	}
	go func() {
		select {
		case <-ctx.Done():
			cause := context.Cause(ctx)
			if errors.Is(cause, worker.ErrWorkerShutdown) {
				cause = ErrWorkerShutdown
			}
			cancel(cause)
		case <-a.stop.interrupt:
			cancel(ErrWorkerShutdown)
		case <-work.Done():
		}
	}()
	return work, func() {
		cancel(context.Canceled)
		stopDeadline()
	}
}

// interrupted reports whether ctx was cancelled by the worker's shutdown.
func interrupted(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrWorkerShutdown)
}

// shutdownError is the failure of an interrupted attempt: retryable, at
// once.
func shutdownError(what string) error {
	return temporal.NewApplicationErrorWithOptions(what+" was interrupted: the worker is shutting down", ErrShutdown,
		temporal.ApplicationErrorOptions{NextRetryDelay: shutdownRetryDelay})
}
