package agentclient

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
)

// DefaultRetryFor is how long Watch and Events keep retrying a read that
// fails for a reason that says nothing about the run, when WatchOptions
// does not say otherwise.
const DefaultRetryFor = 5 * time.Minute

// final marks an error that retrying cannot mend, such as an answer that
// does not decode.
type final struct{ error }

func (f final) Unwrap() error { return f.error }

// transient says whether a failed read is worth trying again: a server
// restarting or overloaded, a worker being replaced (a query waits for a
// worker), a query timing out, or a starved worker's deadlock detector
// (TMPRL1101). A refused query, a run or namespace that does not exist, a request the
// server calls invalid, missing permission and the caller's own context
// are final.
func transient(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	var notFound *serviceerror.NotFound
	var nsNotFound *serviceerror.NamespaceNotFound
	var invalid *serviceerror.InvalidArgument
	var denied *serviceerror.PermissionDenied
	var unimplemented *serviceerror.Unimplemented
	var fin final
	var queryFailed *serviceerror.QueryFailed
	switch {
	case errors.As(err, &queryFailed):
		// The handler refused the query (an unknown query type: not an
		// agent run) unless the worker's deadlock detector cut it short.
		return strings.Contains(queryFailed.Message, "TMPRL1101")
	case errors.As(err, &fin), errors.As(err, &notFound), errors.As(err, &nsNotFound), errors.As(err, &invalid),
		errors.As(err, &denied), errors.As(err, &unimplemented):
		return false
	}
	return true
}

// retry runs read until it succeeds, fails for good, or has failed
// transiently for longer than retryFor, backing off from 100 ms to 5 s.
func retry(ctx context.Context, retryFor time.Duration, read func() error) error {
	if retryFor <= 0 {
		retryFor = DefaultRetryFor
	}
	delay := 100 * time.Millisecond
	var firstFailure time.Time
	for {
		err := read()
		if !transient(ctx, err) {
			return err
		}
		if firstFailure.IsZero() {
			firstFailure = time.Now()
		}
		if time.Since(firstFailure) > retryFor {
			return err
		}
		if sleep(ctx, delay) != nil {
			return err
		}
		delay = min(2*delay, 5*time.Second)
	}
}
