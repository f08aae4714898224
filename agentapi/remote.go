package agentapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/durable-agents/agentloop/agent"
)

// A remote tool (agent.RemoteTool) is an activity on a task queue of its
// own, in any SDK language. These are its input and result, and the
// argument of the session's setRemoteTools Update. While it runs, the
// activity may send its workflow (WorkflowID, RunID) the toolUpdate Signal
// (ToolUpdate: partial results) and the toolQueue Signal (ToolQueue:
// steering and follow-up messages), naming its call by ToolCallID and
// Position and its attempt by the activity's own attempt number.

// RemoteToolInput is the remote tool activity's one argument.
type RemoteToolInput struct {
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
	// Args are the validated arguments, after pi's coercion and the
	// before hooks; never omitted ({} when there are none).
	Args map[string]any `json:"args"`
	// Position is the call's place among its message's tool calls, from
	// 1: signals name the call by id and position.
	Position int `json:"position"`
	// WorkflowID and RunID are the run's workflow execution, where the
	// activity sends its signals (the activity's info has them too).
	WorkflowID string `json:"workflowId"`
	RunID      string `json:"runId"`
	// Aborted is set when the run was aborted before the call started:
	// pi's tool would see an aborted signal.
	Aborted bool `json:"aborted,omitempty"`
}

// RemoteToolResult is pi's tool result, as the activity returns it:
// content blocks for the model, details for clients, isError for a failed
// call (pi's thrown tool), terminate to end the run after this batch when
// every result of the batch asks for it.
type RemoteToolResult struct {
	Content   []agent.Content `json:"content"`
	Details   json.RawMessage `json:"details,omitempty"`
	IsError   bool            `json:"isError,omitempty"`
	Terminate bool            `json:"terminate,omitempty"`
	// DurationMs (optional, not pi's) is how long the tool ran, as it
	// measured it. A parallel batch orders its calls' ends by their
	// durations, as if every call had started in the same instant, as
	// pi's do; without it the workflow counts from the call's schedule
	// to its result, which includes the trip to the tool's worker.
	DurationMs *float64 `json:"durationMs,omitempty"`
}

// RemoteToolsRequest is the argument of the setRemoteTools Update: the
// session's remote tools from its next run on (an empty list removes
// them).
type RemoteToolsRequest struct {
	RemoteTools *[]agent.RemoteTool `json:"remoteTools"`

	unknown string
}

// UnmarshalJSON decodes the request and remembers the first field it, or
// one of its tools, does not have.
func (r *RemoteToolsRequest) UnmarshalJSON(b []byte) error {
	type plain RemoteToolsRequest
	p, unknown, err := decodePlain[plain](b)
	*r = RemoteToolsRequest(p)
	r.unknown = unknown
	return err
}

// FieldError is the validator's refusal of a request with a field it does
// not have, nil when it has none.
func (r RemoteToolsRequest) FieldError() error {
	if r.unknown == "" {
		return nil
	}
	names := jsonNames(reflect.TypeFor[agent.RemoteTool]())
	return fmt.Errorf("unknown field %q: the request has remoteTools, and a remote tool has %s",
		r.unknown, strings.Join(names, ", "))
}

// HooksRequest is the argument of the setHooks Update: the session's
// beforeToolCall and afterToolCall hooks from its next run on, each entry a
// Go hook's name, {"activity": ...} or {"webhook": ...}. A list left out
// stays as it is; an empty one removes that event's hooks.
type HooksRequest struct {
	BeforeToolCall *[]agent.Hook `json:"beforeToolCall"`
	AfterToolCall  *[]agent.Hook `json:"afterToolCall"`

	unknown string
}

// UnmarshalJSON decodes the request and remembers the first field it does
// not have.
func (r *HooksRequest) UnmarshalJSON(b []byte) error {
	type plain HooksRequest
	p, unknown, err := decodePlain[plain](b)
	*r = HooksRequest(p)
	r.unknown = unknown
	return err
}

// Check is the validator's refusal of a request with a field it does not
// have, with neither list, or with a malformed hook; nil when it has none
// of these. Whether the worker has the Go hooks it names is the session's
// check (ResolveRun).
func (r HooksRequest) Check() error {
	if r.unknown != "" {
		return fmt.Errorf("unknown field %q: the request has beforeToolCall and afterToolCall", r.unknown)
	}
	if r.BeforeToolCall == nil && r.AfterToolCall == nil {
		return errors.New(`want {"beforeToolCall": [...], "afterToolCall": [...]} (either; [] removes them): each hook a Go hook's name, {"activity": {...}} or {"webhook": {...}}`)
	}
	var errs []error
	if r.BeforeToolCall != nil {
		errs = append(errs, agent.CheckHooks("beforeToolCall", *r.BeforeToolCall))
	}
	if r.AfterToolCall != nil {
		errs = append(errs, agent.CheckHooks("afterToolCall", *r.AfterToolCall))
	}
	return errors.Join(errs...)
}
