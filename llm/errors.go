package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// overflowPatterns are pi-ai's (utils/overflow.js): the texts providers use
// when the prompt does not fit the context window.
var overflowPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)prompt is too long`),
	regexp.MustCompile(`(?i)request_too_large`),
	regexp.MustCompile(`(?i)input is too long for requested model`),
	regexp.MustCompile(`(?i)exceeds the context window`),
	regexp.MustCompile(`(?i)input token count.*exceeds the maximum`),
	regexp.MustCompile(`(?i)maximum prompt length is \d+`),
	regexp.MustCompile(`(?i)reduce the length of the messages`),
	regexp.MustCompile(`(?i)maximum context length is \d+ tokens`),
	regexp.MustCompile(`(?i)exceeds the limit of \d+`),
	regexp.MustCompile(`(?i)exceeds the available context size`),
	regexp.MustCompile(`(?i)greater than the context length`),
	regexp.MustCompile(`(?i)context window exceeds limit`),
	regexp.MustCompile(`(?i)exceeded model token limit`),
	regexp.MustCompile(`(?i)too large for model with \d+ maximum context length`),
	regexp.MustCompile(`(?i)model_context_window_exceeded`),
	regexp.MustCompile(`(?i)prompt too long; exceeded (?:max )?context length`),
	regexp.MustCompile(`(?i)context[_ ]length[_ ]exceeded`),
	regexp.MustCompile(`(?i)too many tokens`),
	regexp.MustCompile(`(?i)token limit exceeded`),
	regexp.MustCompile(`(?i)^4(?:00|13)\s*(?:status code)?\s*\(no body\)`),
}

// notOverflowPatterns win over overflowPatterns: a throttling message that
// says "too many tokens" is a rate limit.
var notOverflowPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)^(Throttling error|Service unavailable):`),
	regexp.MustCompile(`(?i)rate limit`),
	regexp.MustCompile(`(?i)too many requests`),
}

// isContextOverflow reports whether an error text says the prompt is too
// long for the model, as pi-ai's isContextOverflow does.
func isContextOverflow(text string) bool {
	for _, p := range notOverflowPatterns {
		if p.MatchString(text) {
			return false
		}
	}
	for _, p := range overflowPatterns {
		if p.MatchString(text) {
			return true
		}
	}
	return false
}

// classifyStatus turns an HTTP failure into an *Error. message is the
// provider's error text, code its machine-readable type or code (used only
// to recognise a context overflow); header may be nil.
func classifyStatus(status int, header http.Header, message, code string) *Error {
	if message == "" {
		// pi-ai's wording, which its overflow patterns expect.
		message = fmt.Sprintf("%d status code (no body)", status)
	}
	e := &Error{Status: status, Message: message}
	switch {
	case status == http.StatusTooManyRequests:
		e.Kind = ErrRateLimited
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Kind = ErrAuth
	case status == http.StatusNotFound:
		e.Kind = ErrNotFound
	case status >= 500 || status == http.StatusRequestTimeout || status == http.StatusConflict:
		// 529 is Anthropic's "overloaded"; 408 and 409 are worth another try.
		e.Kind = ErrUnavailable
	case isContextOverflow(message) || isContextOverflow(code):
		e.Kind = ErrContextOverflow
	default:
		e.Kind = ErrBadRequest
	}
	if e.Kind == ErrRateLimited || e.Kind == ErrUnavailable {
		e.RetryAfter = retryAfter(header, time.Now())
	}
	return e
}

// retryAfter reads retry-after-ms (OpenAI's, fractional milliseconds) or
// retry-after (seconds or an HTTP date); zero when absent or unreadable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// networkError classifies a failure with no HTTP status: a refused or
// reset connection, a timeout, a stream cut short. All are worth a retry.
func networkError(err error) *Error {
	if errors.Is(err, errStreamCut) {
		return &Error{Kind: ErrUnavailable, Message: err.Error()}
	}
	return &Error{Kind: ErrUnavailable, Message: "connection error: " + err.Error()}
}

// scrubbed returns e with every secret removed from its message, so an API
// key can never reach an event, a log or a transcript, whatever the
// provider or the transport put in the error text.
func scrubbed(e *Error, secrets ...string) *Error {
	e.Message = scrub(e.Message, secrets...)
	return e
}

func scrub(text string, secrets ...string) string {
	for _, s := range secrets {
		if len(s) >= 4 {
			text = strings.ReplaceAll(text, s, "[redacted]")
		}
	}
	return text
}

// errStreamCut is the failure of a stream that ended before the provider
// said it was complete.
var errStreamCut = errors.New("stream ended before the response was complete")

// truncate bounds provider text that goes into an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// ErrWorkerShutdown is the kind of a call stopped because its worker is
// shutting down (a deploy), which is neither the run's abort nor the
// provider's failure: the activity fails with this retryable type and
// another worker makes the call again at once.
const ErrWorkerShutdown ErrorKind = "WorkerShutdown"

// shutdownCause is what the context cause of a worker's shutdown
// implements (activities.ErrWorkerShutdown; tools.ShuttingDown looks for
// the same method), so that this package needs no Temporal import.
type shutdownCause interface{ WorkerShutdown() bool }

// shuttingDown reports whether ctx was cancelled by its worker's shutdown.
func shuttingDown(ctx context.Context) bool {
	if ctx.Err() == nil {
		return false
	}
	var s shutdownCause
	return errors.As(context.Cause(ctx), &s) && s.WorkerShutdown()
}

// aborted reports whether ctx was cancelled by the run's abort, which pi
// reports as a message with stopReason aborted. A deadline is not an
// abort, and neither is the worker shutting down: that call is not over,
// another worker makes it again.
func aborted(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.Canceled) && !shuttingDown(ctx)
}

// ctxFailure returns the failure of a call whose context ended for a
// reason other than an abort: its deadline passed, or its worker is
// shutting down. Both are worth another try. nil when ctx has not ended
// that way.
func ctxFailure(ctx context.Context) *Error {
	if shuttingDown(ctx) {
		return &Error{Kind: ErrWorkerShutdown, Message: "the worker running the model call is shutting down"}
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil
	}
	return &Error{Kind: ErrUnavailable, Message: "the model call timed out"}
}
