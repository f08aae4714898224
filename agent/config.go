package agent

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ModelRef names a model: a provider registered in the worker and the
// provider's model id.
type ModelRef struct {
	Provider string `json:"provider"`
	ID       string `json:"id"`
}

// String returns provider/id.
func (m ModelRef) String() string { return m.Provider + "/" + m.ID }

// ParseModelRef parses "provider/model-id"; the id may itself contain
// slashes ("openrouter/anthropic/claude-sonnet-4.5").
func ParseModelRef(s string) (ModelRef, error) {
	provider, id, ok := strings.Cut(s, "/")
	if !ok || provider == "" || id == "" {
		return ModelRef{}, fmt.Errorf("model %q: want provider/model-id", s)
	}
	return ModelRef{Provider: provider, ID: id}, nil
}

// ModelOptions are the per-call options a provider may honour.
type ModelOptions struct {
	// Reasoning is the thinking level: minimal, low, medium, high, xhigh;
	// empty means off.
	Reasoning   string   `json:"reasoning,omitempty"`
	MaxTokens   int      `json:"maxTokens,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	SessionID   string   `json:"sessionId,omitempty"`
}

// StopRule is the run's shouldStopAfterTurn: the run ends after the turn
// that reaches it, without polling steering or follow-up queues.
type StopRule struct {
	// Turns stops the run at the end of the Turns-th normal turn.
	Turns int `json:"turns,omitempty"`
}

// LoopConfig is everything about a run except its messages. Field names
// follow pi's AgentLoopConfig where pi has the field.
type LoopConfig struct {
	SystemPrompt string       `json:"systemPrompt,omitempty"`
	Model        ModelRef     `json:"model"`
	ModelOptions ModelOptions `json:"modelOptions,omitempty"`
	// Tools are tool names resolved in the worker's tool registry.
	Tools []string `json:"tools,omitempty"`
	// RemoteTools are tools served by activities on task queues of their
	// own, in any SDK language (remote.go); the model is offered them
	// after Tools.
	RemoteTools   []RemoteTool  `json:"remoteTools,omitempty"`
	ToolExecution ExecutionMode `json:"toolExecution,omitempty"`
	SteeringMode  QueueMode     `json:"steeringMode,omitempty"`
	FollowUpMode  QueueMode     `json:"followUpMode,omitempty"`
	// BeforeToolCall and AfterToolCall name hooks, run in order: Go hooks
	// registered in the worker (by name), activities on a task queue and
	// webhooks (Hook).
	BeforeToolCall []Hook    `json:"beforeToolCall,omitempty"`
	AfterToolCall  []Hook    `json:"afterToolCall,omitempty"`
	StopAfterTurn  *StopRule `json:"stopAfterTurn,omitempty"`
	// Approval names the tool calls that wait for a person.
	Approval *ApprovalPolicy `json:"approval,omitempty"`
	// Workspace is the directory file tools work in, on the tool worker.
	Workspace string `json:"workspace,omitempty"`
	// ToolTaskQueue routes tool executions to workers pinned to the machine
	// that holds the workspace; empty means the workflow's task queue.
	ToolTaskQueue string `json:"toolTaskQueue,omitempty"`
	// HostStartTimeout (a Go duration; default the worker's
	// -host-start-timeout, 2m) bounds how long a workspace tool call waits
	// for a worker on the queue of the host that holds the workspace; then
	// it ends with a "host ... is unavailable" error result and the run's
	// later tools move to a live host.
	HostStartTimeout string `json:"hostStartTimeout,omitempty"`
	// Sandbox is what the run asks of the sandbox its commands run in.
	Sandbox *SandboxConfig `json:"sandbox,omitempty"`
	// Compaction sets when the context is compacted; nil means pi's
	// defaults, automatic when the model's context window is known.
	Compaction *CompactionConfig `json:"compaction,omitempty"`
	// EventOrderWindow (a Go duration, default DefaultEventOrderWindow)
	// bounds how long a parallel batch holds a finished call's
	// tool_execution_end so that a slower-to-report sibling's earlier end
	// can still come first, as in pi. Longer keeps pi's order on a loaded
	// machine; shorter shows ends sooner.
	EventOrderWindow string `json:"eventOrderWindow,omitempty"`
	// Budget bounds the run's (a session's: the whole session's) cost,
	// tokens, turns and tool calls; nil is no limit.
	Budget *Budget `json:"budget,omitempty"`
	// ConfigDriftTimeout (a Go duration, default DefaultConfigDriftTimeout)
	// bounds how long a stage waits for a worker that has the model,
	// provider key, tool, MCP server or hook the run needs, while the
	// workers it reaches lack it (ConfigDrift: a rollout in progress).
	ConfigDriftTimeout string `json:"configDriftTimeout,omitempty"`
	// ModelRetryTimeout (a Go duration, default DefaultModelRetryTimeout)
	// is how long a model turn (or a compaction's summary) keeps retrying
	// a provider that is down or rate-limited before the turn ends with
	// the provider's error.
	ModelRetryTimeout string `json:"modelRetryTimeout,omitempty"`
	// SubAgents are the profiles the model may delegate to through the
	// task tool (SubAgentTool); each call runs a child AgentLoop.
	SubAgents      []SubAgent      `json:"subAgents,omitempty"`
	SubAgentLimits *SubAgentLimits `json:"subAgentLimits,omitempty"`
	// SubAgentDepth is how deep below the top run this run is: 0 for a
	// run people start, set by a parent for its children.
	SubAgentDepth int `json:"subAgentDepth,omitempty"`
}

// CompactionConfig is pi-coding-agent's compaction settings: compact when
// the context passes ContextWindow - ReserveTokens, keeping about
// KeepRecentTokens of the newest messages.
type CompactionConfig struct {
	// Disabled turns automatic compaction off; a manual compact still
	// works, and so does the recovery from a provider's overflow error.
	Disabled bool `json:"disabled,omitempty"`
	// ReserveTokens (default 16384) is the room left for the answer.
	ReserveTokens int `json:"reserveTokens,omitempty"`
	// KeepRecentTokens (default 20000) is how much recent context stays.
	KeepRecentTokens int `json:"keepRecentTokens,omitempty"`
	// ContextWindow overrides the window pi-ai's model table gives, and is
	// needed for models the table does not list (local and
	// OpenAI-compatible ones): without a window, compaction is automatic
	// only on the provider's overflow error.
	ContextWindow int `json:"contextWindow,omitempty"`
}

// SandboxConfig is a run's request to the sandbox of its tool processes
// (internal/sandbox).
type SandboxConfig struct {
	// Network "on" lets commands reach the public internet through the
	// worker's HTTP proxy (never loopback, private addresses or the
	// Temporal frontend); "" or "off" leaves them without network.
	Network string `json:"network,omitempty"`
	// Env adds variables to the commands' environment.
	Env map[string]string `json:"env,omitempty"`
}

// NetworkOn reports whether the run asked for network.
func (s *SandboxConfig) NetworkOn() bool { return s != nil && s.Network == "on" }

// Check refuses a network value other than on and off.
func (s *SandboxConfig) Check() error {
	if s != nil && s.Network != "" && s.Network != "on" && s.Network != "off" {
		return fmt.Errorf("sandbox.network %q: want on or off", s.Network)
	}
	return nil
}

// DefaultEventOrderWindow is the EventOrderWindow when none is given: the
// calls of a batch reach workers one by one, up to a few hundred
// milliseconds apart under load.
const DefaultEventOrderWindow = 500 * time.Millisecond

// maxEventOrderWindow keeps a typo from hiding tool ends for hours.
const maxEventOrderWindow = time.Minute

// DefaultConfigDriftTimeout is the ConfigDriftTimeout when none is given:
// long enough for a rollout to replace a misconfigured pod.
const DefaultConfigDriftTimeout = 5 * time.Minute

// maxConfigDriftTimeout keeps a typo from holding a run for weeks.
const maxConfigDriftTimeout = 24 * time.Hour

// DriftTimeout is the parsed ConfigDriftTimeout.
func (c *LoopConfig) DriftTimeout() time.Duration {
	if d, err := time.ParseDuration(c.ConfigDriftTimeout); err == nil && d > 0 {
		return d
	}
	return DefaultConfigDriftTimeout
}

// OrderWindow is the parsed EventOrderWindow.
func (c *LoopConfig) OrderWindow() time.Duration {
	if d, err := time.ParseDuration(c.EventOrderWindow); err == nil && d > 0 {
		return d
	}
	return DefaultEventOrderWindow
}

// DefaultModelRetryTimeout is the ModelRetryTimeout when none is given:
// long enough to wait out a provider's outage of an hour or two.
const DefaultModelRetryTimeout = 2 * time.Hour

// maxModelRetryTimeout keeps a typo from retrying for a month.
const maxModelRetryTimeout = 7 * 24 * time.Hour

// ModelRetryWindow is the parsed ModelRetryTimeout.
func (c *LoopConfig) ModelRetryWindow() time.Duration {
	if d, err := time.ParseDuration(c.ModelRetryTimeout); err == nil && d > 0 {
		return d
	}
	return DefaultModelRetryTimeout
}

// Normalize fills pi's defaults and checks the enumerations.
func (c *LoopConfig) Normalize() error {
	if c.ToolExecution == "" {
		c.ToolExecution = ExecutionParallel
	}
	if c.SteeringMode == "" {
		c.SteeringMode = QueueOneAtATime
	}
	if c.FollowUpMode == "" {
		c.FollowUpMode = QueueOneAtATime
	}
	var errs []error
	if c.Model.Provider == "" || c.Model.ID == "" {
		errs = append(errs, errors.New(`model: want {"provider": "...", "id": "..."}`))
	}
	if c.ToolExecution != ExecutionParallel && c.ToolExecution != ExecutionSequential {
		errs = append(errs, fmt.Errorf("toolExecution %q: want parallel or sequential", c.ToolExecution))
	}
	if m := c.SteeringMode; m != QueueOneAtATime && m != QueueAll {
		errs = append(errs, fmt.Errorf("steeringMode %q: want one-at-a-time or all", m))
	}
	if m := c.FollowUpMode; m != QueueOneAtATime && m != QueueAll {
		errs = append(errs, fmt.Errorf("followUpMode %q: want one-at-a-time or all", m))
	}
	switch c.ModelOptions.Reasoning {
	case "", "minimal", "low", "medium", "high", "xhigh":
	default:
		errs = append(errs, fmt.Errorf("modelOptions.reasoning %q: want minimal, low, medium, high or xhigh", c.ModelOptions.Reasoning))
	}
	if k := c.Compaction; k != nil && (k.ReserveTokens < 0 || k.KeepRecentTokens < 0 || k.ContextWindow < 0) {
		errs = append(errs, errors.New("compaction: reserveTokens, keepRecentTokens and contextWindow must not be negative"))
	}
	if c.StopAfterTurn != nil && c.StopAfterTurn.Turns < 0 {
		errs = append(errs, errors.New("stopAfterTurn.turns must not be negative"))
	}
	if err := c.Approval.Check(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Sandbox.Check(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Budget.Check(); err != nil {
		errs = append(errs, err)
	}
	if err := CheckHooks("beforeToolCall", c.BeforeToolCall); err != nil {
		errs = append(errs, err)
	}
	if err := CheckHooks("afterToolCall", c.AfterToolCall); err != nil {
		errs = append(errs, err)
	}
	if l := c.SubAgentLimits; l != nil && l.CheckInterval != "" {
		if d, err := time.ParseDuration(l.CheckInterval); err != nil || d < time.Second {
			errs = append(errs, fmt.Errorf("subAgentLimits.checkInterval %q: want a Go duration of at least 1s, such as 10m", l.CheckInterval))
		}
	}
	if c.EventOrderWindow != "" {
		if d, err := time.ParseDuration(c.EventOrderWindow); err != nil || d <= 0 || d > maxEventOrderWindow {
			errs = append(errs, fmt.Errorf("eventOrderWindow %q: want a positive Go duration up to %v, such as 500ms", c.EventOrderWindow, maxEventOrderWindow))
		}
	}
	if c.HostStartTimeout != "" {
		if d, err := time.ParseDuration(c.HostStartTimeout); err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("hostStartTimeout %q: want a positive Go duration such as 2m", c.HostStartTimeout))
		}
	}
	if c.ConfigDriftTimeout != "" {
		if d, err := time.ParseDuration(c.ConfigDriftTimeout); err != nil || d <= 0 || d > maxConfigDriftTimeout {
			errs = append(errs, fmt.Errorf("configDriftTimeout %q: want a positive Go duration up to %v, such as 5m", c.ConfigDriftTimeout, maxConfigDriftTimeout))
		}
	}
	if c.ModelRetryTimeout != "" {
		if d, err := time.ParseDuration(c.ModelRetryTimeout); err != nil || d <= 0 || d > maxModelRetryTimeout {
			errs = append(errs, fmt.Errorf("modelRetryTimeout %q: want a positive Go duration up to %v, such as 2h", c.ModelRetryTimeout, maxModelRetryTimeout))
		}
	}
	if err := CheckRemoteTools(c.RemoteTools, c.Tools, BuiltinToolNames); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.checkSubAgents()...)
	seen := map[string]bool{}
	for _, t := range c.Tools {
		if t == "" {
			errs = append(errs, errors.New("tools: empty tool name"))
		}
		if seen[t] {
			errs = append(errs, fmt.Errorf("tools: %q listed twice", t))
		}
		seen[t] = true
	}
	return errors.Join(errs...)
}
