package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/durable-agents/agentloop/agent"
)

// Tool is what a model is told about a tool.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one model call: pi-ai's Context plus the call's options.
type Request struct {
	SystemPrompt string
	Messages     []agent.Message
	Tools        []Tool
	Options      agent.ModelOptions
}

// Model streams one assistant response.
//
// Stream calls emit for each stream event as it arrives (it may be nil) and
// returns the final assistant message. As in pi, an aborted call (ctx
// cancelled) is data: it returns a message with stopReason aborted and no
// error. Failures the caller should know about are errors, preferably
// *Error, so the activity can retry or fail fast.
type Model interface {
	Stream(ctx context.Context, req Request, emit func(agent.StreamEvent)) (agent.Message, error)
}

// Provider makes models by id.
type Provider interface {
	Model(id string) (Model, error)
}

// ProviderFunc adapts a function to Provider.
type ProviderFunc func(id string) (Model, error)

// Model calls f.
func (f ProviderFunc) Model(id string) (Model, error) { return f(id) }

// ErrorKind classifies a provider failure for retries.
type ErrorKind string

// Error kinds. Their names are the stable ApplicationError types the
// model-turn activity fails with.
const (
	ErrRateLimited     ErrorKind = "ModelRateLimited"     // 429: retry after RetryAfter
	ErrUnavailable     ErrorKind = "ModelUnavailable"     // 5xx, network, cut stream: retry
	ErrBadRequest      ErrorKind = "ModelBadRequest"      // 400: do not retry
	ErrAuth            ErrorKind = "ModelAuth"            // 401, 403: do not retry
	ErrNotFound        ErrorKind = "ModelNotFound"        // 404: do not retry
	ErrContextOverflow ErrorKind = "ModelContextOverflow" // prompt too long: do not retry
)

// Retryable reports whether Temporal should try the call again.
func (k ErrorKind) Retryable() bool {
	return k == ErrRateLimited || k == ErrUnavailable || k == ErrWorkerShutdown
}

// Error is a classified provider failure.
type Error struct {
	Kind   ErrorKind
	Status int
	// RetryAfter is the provider's retry-after, zero when it gave none.
	RetryAfter time.Duration
	// Message is the provider's error text; it becomes the errorMessage of
	// the assistant message when retries are exhausted. It never holds
	// credentials.
	Message string
}

func (e *Error) Error() string { return e.Message }

// AsError returns err's *Error, if it is one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Registry maps provider names to providers. It is filled before the worker
// starts and only read afterwards.
type Registry struct {
	providers map[string]Provider
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{providers: map[string]Provider{}} }

// Register adds a provider under name.
func (r *Registry) Register(name string, p Provider) { r.providers[name] = p }

// Model resolves a model reference.
func (r *Registry) Model(ref agent.ModelRef) (Model, error) {
	p, ok := r.providers[ref.Provider]
	if !ok {
		return nil, fmt.Errorf("unknown model provider %q; this worker has %q", ref.Provider, r.Providers())
	}
	return p.Model(ref.ID)
}

// Providers returns the registered provider names, sorted.
func (r *Registry) Providers() []string {
	return slices.Sorted(maps.Keys(r.providers))
}
