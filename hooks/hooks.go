package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/durable-agents/agentloop/agent"
)

// Run identifies the workflow run a hook is called for.
type Run struct {
	WorkflowID string `json:"workflowId"`
	RunID      string `json:"runId"`
}

// BeforeContext is what a beforeToolCall hook sees. ToolCall is the raw
// block from the assistant message; Args are the validated arguments that
// execute will receive. Unlike pi, the hook does not get the whole transcript:
// passing it to every hook activity would make history grow with the
// transcript.
type BeforeContext struct {
	Run      Run            `json:"run"`
	ToolCall agent.Content  `json:"toolCall"`
	Args     map[string]any `json:"args"`
}

// BeforeResult blocks a call when Block is set; Reason becomes the error
// result's text ("Tool execution was blocked" when empty).
type BeforeResult struct {
	Block  bool   `json:"block,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Before is a beforeToolCall hook. It may return nil to let the call run.
// An error blocks the call with the error's message, as a throw does in pi.
type Before func(ctx context.Context, c BeforeContext) (*BeforeResult, error)

// AfterContext is what an afterToolCall hook sees.
type AfterContext struct {
	Run      Run              `json:"run"`
	ToolCall agent.Content    `json:"toolCall"`
	Args     map[string]any   `json:"args"`
	Result   agent.ToolResult `json:"result"`
	IsError  bool             `json:"isError"`
}

// AfterResult overrides fields of the result; a nil field keeps the original
// (pi merges with ??). Content and Details replace the originals whole.
type AfterResult struct {
	Content   []agent.Content `json:"content,omitempty"`
	Details   json.RawMessage `json:"details,omitempty"`
	IsError   *bool           `json:"isError,omitempty"`
	Terminate *bool           `json:"terminate,omitempty"`
}

// After is an afterToolCall hook. It may return nil to keep the result. An
// error replaces the result with an error result carrying its message.
type After func(ctx context.Context, c AfterContext) (*AfterResult, error)

// Apply merges an after hook's result into a call's result as pi's
// finalizeExecutedToolCall does.
func Apply(result agent.ToolResult, isError bool, o *AfterResult) (agent.ToolResult, bool) {
	if o == nil {
		return result, isError
	}
	next := agent.ToolResult{Content: result.Content, Details: result.Details, Terminate: result.Terminate}
	if o.Content != nil {
		next.Content = o.Content
	}
	if len(o.Details) > 0 && string(o.Details) != "null" {
		next.Details = o.Details
	}
	if o.Terminate != nil {
		next.Terminate = *o.Terminate
	}
	if o.IsError != nil {
		isError = *o.IsError
	}
	return next, isError
}

// Registry maps hook names to hooks. It is filled before the worker starts
// and only read afterwards.
type Registry struct {
	before map[string]Before
	after  map[string]After
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{before: map[string]Before{}, after: map[string]After{}}
}

// RegisterBefore adds a beforeToolCall hook under name.
func (r *Registry) RegisterBefore(name string, h Before) { r.before[name] = h }

// RegisterAfter adds an afterToolCall hook under name.
func (r *Registry) RegisterAfter(name string, h After) { r.after[name] = h }

// Before returns the named beforeToolCall hook.
func (r *Registry) Before(name string) (Before, bool) {
	h, ok := r.before[name]
	return h, ok
}

// After returns the named afterToolCall hook.
func (r *Registry) After(name string) (After, bool) {
	h, ok := r.after[name]
	return h, ok
}

// Check returns an error naming every unknown hook.
func (r *Registry) Check(before, after []string) error {
	var unknown []string
	for _, n := range before {
		if _, ok := r.before[n]; !ok {
			unknown = append(unknown, "beforeToolCall "+n)
		}
	}
	for _, n := range after {
		if _, ok := r.after[n]; !ok {
			unknown = append(unknown, "afterToolCall "+n)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	return fmt.Errorf("unknown hooks %q; this worker has beforeToolCall %q and afterToolCall %q",
		unknown, slices.Sorted(maps.Keys(r.before)), slices.Sorted(maps.Keys(r.after)))
}
