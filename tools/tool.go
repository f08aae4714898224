package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/durable-agents/agentloop/agent"
)

// Definition is what the model and the scheduler know about a tool.
type Definition struct {
	Name        string `json:"name"`
	Label       string `json:"label,omitempty"`
	Description string `json:"description"`
	// Parameters is the JSON schema of the arguments; nil means an object
	// with no properties.
	Parameters json.RawMessage `json:"parameters,omitempty"`
	// ExecutionMode sequential makes every batch holding this tool run
	// sequentially; empty means parallel.
	ExecutionMode agent.ExecutionMode `json:"executionMode,omitempty"`
	// ReadOnly tools change nothing; an approval policy for mutating
	// tools lets them through.
	ReadOnly bool `json:"readOnly,omitempty"`
	// Workspace tools read or write the run's workspace, so they run on
	// the worker host that holds it (the run's tool queue).
	Workspace bool `json:"workspace,omitempty"`
	// Durability says how Temporal runs the tool's ExecuteToolCall activity.
	Durability Durability `json:"durability,omitempty"`
}

// Durability is a tool's activity policy. Zero values take the worker's
// defaults.
type Durability struct {
	// Retry says whether running a call again is safe; it decides the
	// retry policy (see RetryClass).
	Retry RetryClass `json:"retry,omitempty"`
	// Timeout bounds one attempt (start-to-close).
	Timeout time.Duration `json:"timeout,omitempty"`
	// MaxAttempts caps the attempts of a retry-safe tool; 0 means the
	// default retry policy. RetryOnce means 1 whatever this says.
	MaxAttempts int `json:"maxAttempts,omitempty"`
	// HeartbeatTimeout is how long the tool's worker may go silent before
	// the attempt counts as lost; 0 means the workflow's default (30 s).
	// ExecuteToolCall heartbeats every 50 ms whatever the tool does, so a
	// few seconds are enough on a healthy network.
	HeartbeatTimeout time.Duration `json:"heartbeatTimeout,omitempty"`
}

// RetryClass says whether a tool call may run again after an attempt
// that failed or was lost, when nobody knows whether it had its effect.
type RetryClass string

const (
	// RetrySafe: running a call twice has the effect of running it once
	// (read-only tools; write, which overwrites a file with the same
	// content). Temporal retries a lost or failed attempt, on any worker
	// of the tool's queue. The zero value means RetrySafe.
	RetrySafe RetryClass = "safe"
	// RetryOnce: a second run could do the work twice (edit applies its
	// replacement to text it already edited; bash repeats a command's
	// side effects). One attempt, journaled on the tool's host: a lost
	// attempt is answered from the journal when it finished there, and
	// otherwise reported to the model, never run again.
	RetryOnce RetryClass = "once"
)

// Attempts is the retry policy's maximum attempts: 1 for RetryOnce,
// MaxAttempts otherwise (0: the workflow's default).
func (d Durability) Attempts() int {
	if d.Retry == RetryOnce {
		return 1
	}
	return d.MaxAttempts
}

// SingleAttempt reports whether the tool runs at most once per call, and
// so is journaled.
func (d Durability) SingleAttempt() bool { return d.Attempts() == 1 }

// Tool is one tool the model can call.
type Tool interface {
	Definition() Definition
	// Execute runs the call. A returned error becomes an error result whose
	// text is the error's message, as a thrown error does in pi; wrap it
	// with Fault when Temporal should retry the attempt instead.
	Execute(ctx context.Context, call Call) (agent.ToolResult, error)
}

// ArgumentPreparer is implemented by tools that accept an older argument
// shape: PrepareArguments runs on the raw arguments before validation (pi's
// prepareArguments).
type ArgumentPreparer interface {
	PrepareArguments(args map[string]any) (map[string]any, error)
}

// Call is one execution of a tool.
type Call struct {
	ID   string
	Name string
	// Args are the validated, coerced arguments.
	Args map[string]any
	// Workspace is the directory file tools resolve paths in.
	Workspace string
	// Sandbox is what the run asks of the sandbox its commands run in
	// (network, extra environment); nil asks for nothing.
	Sandbox *agent.SandboxConfig
	// IdempotencyKey is stable across retries of the same call: workflow id
	// and tool call id.
	IdempotencyKey string
	// Scope names the run the call belongs to (its namespace and workflow
	// id, which a continued-as-new session keeps): bash's saved outputs
	// belong to it, and only calls of the same scope read them. Calls
	// without one (outside a workflow) share one directory.
	Scope string
	// Update emits a partial result (tool_execution_update). It may be nil.
	Update func(agent.ToolResult)
	// Run lets a tool queue messages into its own run or abort it. It may be
	// nil when the tool runs outside a workflow (tests).
	Run RunControl
	// ReportDuration, when set, lets a tool that simulates time (the
	// conformance tools sleep on a script) say how long it took in that
	// time; the workflow orders the ends of a parallel batch by durations.
	ReportDuration func(time.Duration)
	// UpdateAt, when set, emits a partial result at an offset from the
	// call's start in the same simulated time; Update stamps it with the
	// wall clock instead.
	UpdateAt func(r agent.ToolResult, at time.Duration)
}

// FuncTool is a tool whose behaviour is a function, for a tool too small
// to need a type of its own.
type FuncTool struct {
	Def Definition
	Fn  func(ctx context.Context, call Call) (agent.ToolResult, error)
}

// Definition implements Tool.
func (f FuncTool) Definition() Definition { return f.Def }

// Execute implements Tool.
func (f FuncTool) Execute(ctx context.Context, call Call) (agent.ToolResult, error) {
	return f.Fn(ctx, call)
}

// EmitUpdate calls Update when it is set.
func (c Call) EmitUpdate(r agent.ToolResult) {
	if c.Update != nil {
		c.Update(r)
	}
}

// EmitUpdateAt emits a partial result at a simulated offset when the call
// takes one, else as EmitUpdate does.
func (c Call) EmitUpdateAt(r agent.ToolResult, at time.Duration) {
	if c.UpdateAt != nil {
		c.UpdateAt(r, at)
		return
	}
	c.EmitUpdate(r)
}

// RunControl is the running agent loop as a tool sees it: pi's agent.steer,
// agent.followUp and agent.abort.
type RunControl interface {
	Steer(ctx context.Context, m agent.Message) error
	FollowUp(ctx context.Context, m agent.Message) error
	Abort(ctx context.Context, reason string) error
}

// FaultError marks an infrastructure fault: the activity fails and Temporal
// retries it under the tool's policy, instead of the model seeing an error
// result at once.
type FaultError struct{ Err error }

func (e *FaultError) Error() string { return e.Err.Error() }
func (e *FaultError) Unwrap() error { return e.Err }

// Fault wraps err as a retryable infrastructure fault.
func Fault(err error) error { return &FaultError{Err: err} }

// IsFault reports whether err is a fault.
func IsFault(err error) bool {
	var f *FaultError
	return errors.As(err, &f)
}

// Registry maps tool names to tools: the worker's own, filled before it
// starts and only read afterwards, then those of its Sources (MCP
// servers), which change while it runs.
type Registry struct {
	tools   map[string]Tool
	sources []Source
}

// Source is a set of tools the worker learns while it runs, such as an
// MCP server's. Its names never shadow the registry's own tools.
type Source interface {
	// Lookup returns the named tool when the source has it; it may
	// connect to learn its tools, within a bounded time.
	Lookup(name string) (Tool, bool)
	// List returns the source's tools as known now, connecting where
	// needed within a bounded time.
	List() []Tool
	// Unavailable says why a name the source would own cannot be
	// resolved now (its server does not answer), or returns nil.
	Unavailable(name string) error
}

// UnavailableError is a Resolve failure that may pass: a tool's server
// does not answer now.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string { return e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

// UnknownError is a Resolve failure naming the tools this registry does
// not have (patterns as given).
type UnknownError struct {
	Names []string
	// Have is what the registry has.
	Have []string
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("unknown tools %q; this worker has %q", e.Names, e.Have)
}

// NewRegistry returns a registry holding the given tools.
func NewRegistry(ts ...Tool) *Registry {
	r := &Registry{tools: map[string]Tool{}}
	for _, t := range ts {
		r.Register(t)
	}
	return r
}

// Register adds a tool; a second tool with the same name replaces the first.
func (r *Registry) Register(t Tool) {
	r.tools[t.Definition().Name] = t
}

// AddSource adds a source of tools. Call it before the worker starts.
func (r *Registry) AddSource(s Source) {
	r.sources = append(r.sources, s)
}

// Get returns the named tool.
func (r *Registry) Get(name string) (Tool, bool) {
	if t, ok := r.tools[name]; ok {
		return t, true
	}
	for _, s := range r.sources {
		if t, ok := s.Lookup(name); ok {
			return t, true
		}
	}
	return nil, false
}

// Names returns the registered names and those of the sources, sorted.
func (r *Registry) Names() []string {
	names := slices.Collect(maps.Keys(r.tools))
	for _, s := range r.sources {
		for _, t := range s.List() {
			if n := t.Definition().Name; r.tools[n] == nil {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Expand replaces each name ending in "*" (such as "github__*") by the
// known names it is a prefix of, sorted, and drops repeated names.
func (r *Registry) Expand(names []string) []string {
	out := make([]string, 0, len(names))
	var all []string
	for _, n := range names {
		prefix, ok := strings.CutSuffix(n, "*")
		if !ok {
			out = append(out, n)
			continue
		}
		if all == nil {
			all = r.Names()
		}
		for _, m := range all {
			if strings.HasPrefix(m, prefix) {
				out = append(out, m)
			}
		}
	}
	seen := make(map[string]bool, len(out))
	return slices.DeleteFunc(out, func(n string) bool {
		dup := seen[n]
		seen[n] = true
		return dup
	})
}

// Resolve returns the definitions of the named tools (patterns expanded,
// see Expand), or an error naming every unknown one. When every unknown
// name belongs to a source that does not answer now, the error is an
// *UnavailableError.
func (r *Registry) Resolve(names []string) ([]Definition, error) {
	expanded := r.Expand(names)
	defs := make([]Definition, 0, len(expanded))
	var unknown []string
	var unavailable []error
	for _, n := range names {
		if prefix, ok := strings.CutSuffix(n, "*"); ok && !slices.ContainsFunc(expanded, func(m string) bool { return strings.HasPrefix(m, prefix) }) {
			if err := r.unavailable(prefix); err != nil {
				unavailable = append(unavailable, err)
			} else {
				unknown = append(unknown, n)
			}
		}
	}
	for _, n := range expanded {
		t, ok := r.Get(n)
		if !ok {
			if err := r.unavailable(n); err != nil {
				unavailable = append(unavailable, err)
			} else {
				unknown = append(unknown, n)
			}
			continue
		}
		defs = append(defs, t.Definition())
	}
	if len(unknown) > 0 {
		return nil, &UnknownError{Names: unknown, Have: r.Names()}
	}
	if len(unavailable) > 0 {
		return nil, &UnavailableError{Err: errors.Join(unavailable...)}
	}
	return defs, nil
}

func (r *Registry) unavailable(name string) error {
	for _, s := range r.sources {
		if err := s.Unavailable(name); err != nil {
			return err
		}
	}
	return nil
}
