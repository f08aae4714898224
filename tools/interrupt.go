package tools

import (
	"context"
	"errors"
)

// A call whose worker is shutting down is interrupted, which is not the
// run's abort: pi's abort is a person's decision and ends a bash command
// with "Command aborted" as the call's result, while a worker that stops
// (a deploy) must hand the call to another worker or report that it did
// not finish. The worker cancels a call's context with a cause that has a
// WorkerShutdown method returning true (activities.ErrWorkerShutdown); this
// package and llm look for that method, so neither imports Temporal.

// shutdownCause is what a worker shutdown's context cause implements.
type shutdownCause interface{ WorkerShutdown() bool }

// ShuttingDown reports whether ctx was cancelled because its worker is
// shutting down, rather than by the run's abort.
func ShuttingDown(ctx context.Context) bool {
	if ctx.Err() == nil {
		return false
	}
	var s shutdownCause
	return errors.As(context.Cause(ctx), &s) && s.WorkerShutdown()
}

// InterruptedError is the error of a call stopped by its worker's
// shutdown before it finished: it may have had some of its effects.
type InterruptedError struct{ Cause error }

func (e *InterruptedError) Error() string {
	if e.Cause == nil {
		return "interrupted: the worker is shutting down"
	}
	return "interrupted: " + e.Cause.Error()
}

func (e *InterruptedError) Unwrap() error { return e.Cause }

// Interrupted returns the error of a call interrupted by cause.
func Interrupted(cause error) error { return &InterruptedError{Cause: cause} }

// IsInterrupted reports whether err is an interrupted call's error.
func IsInterrupted(err error) bool {
	var e *InterruptedError
	return errors.As(err, &e)
}
