package activities

import (
	"encoding/json"
	"time"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// Stable ApplicationError types for input the worker cannot serve. The
// Unknown* types are non-retryable: a run naming them fails at once, and
// they stand for input no worker of this build could serve (a provider or
// built-in tool name the build does not know, a malformed name, a model
// its provider refuses) at a run's first start. What depends on the worker
// instead (ErrConfigDrift) is retryable.
const (
	ErrUnknownModelProvider = "UnknownModelProvider"
	ErrUnknownModel         = "UnknownModel"
	ErrUnknownTool          = "UnknownTool"
	ErrUnknownHook          = "UnknownHook"
	ErrContextMismatch      = "ContextMismatch"
	// ErrToolsUnavailable is retryable: a run's MCP server does not
	// answer now.
	ErrToolsUnavailable = "ToolsUnavailable"
	// ErrConfigDrift is retryable: this worker lacks a model, a provider's
	// key, a tool, an MCP server or a hook that a worker of the same fleet
	// may have (a rollout in progress, a pod started without a secret).
	// Its message names the worker and what it lacks. The workflow leaves
	// the stage to another worker until the run's configDriftTimeout
	// passes (workflows/drift.go).
	ErrConfigDrift = "ConfigDrift"
	// ErrWorkspaceMissing is non-retryable: the run's workspace is on no
	// worker of its task queue (activities/workspace.go).
	ErrWorkspaceMissing = "WorkspaceMissing"
)

// ResolveRunInput names what a run needs from the worker's registries.
type ResolveRunInput struct {
	Model agent.ModelRef `json:"model"`
	// Workspace is the run's workspace, to learn whether this worker's
	// host holds it.
	Workspace      string   `json:"workspace,omitempty"`
	Tools          []string `json:"tools,omitempty"`
	BeforeToolCall []string `json:"beforeToolCall,omitempty"`
	AfterToolCall  []string `json:"afterToolCall,omitempty"`
	// RemoteTools are the names of the run's remote tools: none may be a
	// tool of this worker's registry.
	RemoteTools []string `json:"remoteTools,omitempty"`
	// Resolved is set when the run resolved before (it continued as new):
	// nothing it names is a typo, so whatever this worker lacks is drift.
	Resolved bool `json:"resolved,omitempty"`
	// CheckWorkspace asks whether the workspace is here when the run has
	// workspace tools: the answer's WorkspaceMissing says what is wrong.
	// RequireWorkspace fails the resolve instead, with ConfigDrift when
	// another worker of the task queue may hold it, else with
	// ErrWorkspaceMissing (activities/workspace.go).
	CheckWorkspace   bool `json:"checkWorkspace,omitempty"`
	RequireWorkspace bool `json:"requireWorkspace,omitempty"`
}

// ToolInfo is what the workflow needs to schedule a tool.
type ToolInfo struct {
	Name          string              `json:"name"`
	ExecutionMode agent.ExecutionMode `json:"executionMode,omitempty"`
	ReadOnly      bool                `json:"readOnly,omitempty"`
	// Workspace tools run on the host that holds the run's workspace.
	Workspace bool `json:"workspace,omitempty"`
	// Retry is the tool's retry class (tools.RetryClass): "once" tools
	// have MaxAttempts 1 and are journaled.
	Retry       string        `json:"retry,omitempty"`
	Timeout     time.Duration `json:"timeout,omitempty"`
	MaxAttempts int           `json:"maxAttempts,omitempty"`
	// HeartbeatTimeout is the tool's Durability.HeartbeatTimeout.
	HeartbeatTimeout time.Duration `json:"heartbeatTimeout,omitempty"`
}

// ResolveRunOutput lists the run's tools in input order.
type ResolveRunOutput struct {
	Tools []ToolInfo `json:"tools"`
	// SearchAttributes is set when the worker found the agent search
	// attributes registered, so the workflow may upsert them.
	SearchAttributes bool `json:"searchAttributes,omitempty"`
	// ContextWindow is the model's context window from pi-ai's table, 0
	// when the table does not list the model.
	ContextWindow int `json:"contextWindow,omitempty"`
	// HostQueue is the task queue of the resolving worker's host when it
	// holds the run's workspace: the run's workspace tools go there unless
	// the run names a toolTaskQueue.
	HostQueue string `json:"hostQueue,omitempty"`
	// HostStartTimeout is the worker's bound on how long a tool call
	// waits for a worker on a host queue; zero: the workflow's default.
	HostStartTimeout time.Duration `json:"hostStartTimeout,omitempty"`
	// StoreID is the id of the resolving worker's content store
	// (store/id.go): the run carries it to every activity that reads or
	// writes its content, and a worker with another store refuses those.
	StoreID string `json:"storeId,omitempty"`
	// WorkspaceMissing says what is wrong with the run's workspace on the
	// resolving worker when the run asked (CheckWorkspace), "" when it is
	// there; WorkspaceElsewhere is set when another worker of the task
	// queue may hold it.
	WorkspaceMissing   string `json:"workspaceMissing,omitempty"`
	WorkspaceElsewhere bool   `json:"workspaceElsewhere,omitempty"`
}

// ContextRef tells the model-turn activity which context to send: the first
// BaseLen messages, held by Segments in the content store (the activity's
// cache usually has them already), followed by Delta. History holds the
// segment list and the delta, never the transcript, so it grows with new
// content and not with the transcript.
type ContextRef struct {
	Segments []agent.Segment `json:"segments,omitempty"`
	BaseLen  int             `json:"baseLen"`
	// BaseHash is the workflow's chain hash of the first BaseLen messages
	// (agent.Transcript). This build's workers identify the prefix by its
	// content-addressed Segments and ignore it, so that a deploy that
	// changes how messages encode leaves every session working; it is sent
	// for the workers of earlier builds, which check it.
	BaseHash string          `json:"baseHash"`
	Delta    []agent.Message `json:"delta,omitempty"`
	// SystemPrompt is sent only with BaseLen 0; later turns take it from
	// the cache or the first segment.
	SystemPrompt string `json:"systemPrompt,omitempty"`
	// StoreID is the run's content store id (ResolveRunOutput.StoreID).
	StoreID string `json:"storeId,omitempty"`
}

// ModelTurnInput is one model call.
type ModelTurnInput struct {
	Model   agent.ModelRef     `json:"model"`
	Options agent.ModelOptions `json:"options,omitempty"`
	Tools   []string           `json:"tools,omitempty"`
	// RemoteTools describe the run's remote tools to the model, after
	// Tools.
	RemoteTools []ToolSchema `json:"remoteTools,omitempty"`
	// Defined are tools the run defines itself (the sub-agent tool),
	// described to the model after those.
	Defined []agent.ToolSpec `json:"defined,omitempty"`
	Context ContextRef       `json:"context"`
	Turn    int              `json:"turn"`
	// Prepare asks the turn to prepare its answer's tool calls
	// (prepared.go): the run has no beforeToolCall hooks.
	Prepare bool `json:"prepare,omitempty"`
	// Events are not for the activity: while someone watches, the run's
	// event log since the last model turn was scheduled rides here, so a
	// watcher reads it from the history it long-polls anyway instead of
	// with a Query, a billable action (agentapi.LogExcerpt).
	Events []agent.Event `json:"events,omitempty"`
}

// ToolSchema is how the model sees a tool: its name, description and
// JSON schema.
type ToolSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ModelTurnOutput is the final assistant message of the call (large blocks
// as stubs) and the segments that now hold the context the call sent.
type ModelTurnOutput struct {
	Message  agent.Message   `json:"message"`
	Segments []agent.Segment `json:"segments,omitempty"`
	// Retried is what the provider billed this turn's earlier, failed
	// attempts (billed.go); the run's usage counts it.
	Retried *agent.Usage `json:"retried,omitempty"`
	// Prepared is, when the input asked, one entry per tool call of
	// Message in order (prepared.go).
	Prepared []PreparedCall `json:"prepared,omitempty"`
	// Watched says that someone held the workflow's watch lease during the
	// turn: the next model turn carries the log's new events (Events).
	Watched bool `json:"watched,omitempty"`
}

// PrepareInput is one call to prepare: prepareArguments, validation and the
// before hooks.
type PrepareInput struct {
	ToolCall       agent.Content `json:"toolCall"`
	BeforeToolCall []string      `json:"beforeToolCall,omitempty"`
	// Defined is the definition of a tool the run defines itself (the
	// sub-agent tool), which the worker's registry does not hold.
	Defined *agent.ToolSpec `json:"defined,omitempty"`
	// Aborted is set when the run was aborted before the call: hooks see a
	// cancelled context, as pi's hooks see an aborted signal.
	Aborted bool `json:"aborted,omitempty"`
	// Remote is set for a remote tool (agent.RemoteTool), which no
	// worker's registry holds: Parameters is its schema.
	Remote     bool            `json:"remote,omitempty"`
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// BeforeHooksInput is Go before hooks to run on a call's validated
// arguments.
type BeforeHooksInput struct {
	ToolCall       agent.Content  `json:"toolCall"`
	Args           map[string]any `json:"args"`
	BeforeToolCall []string       `json:"beforeToolCall"`
	Aborted        bool           `json:"aborted,omitempty"`
}

// PrepareOutput is either an immediate result (invalid arguments, blocked,
// a failing prepareArguments or hook) or the validated arguments.
type PrepareOutput struct {
	Immediate bool             `json:"immediate,omitempty"`
	Result    agent.ToolResult `json:"result,omitempty"`
	IsError   bool             `json:"isError,omitempty"`
	// Args are the validated arguments; never omitted, since a tool must
	// get {} rather than nothing.
	Args map[string]any `json:"args"`
}

// ExecuteInput is one tool execution.
type ExecuteInput struct {
	ToolCallID string `json:"toolCallId"`
	// Position is the call's place among its message's tool calls, from 1
	// (0 in inputs scheduled before it existed). A model may give two calls
	// of one message the same id; the call's signals carry its position so
	// that the workflow keeps their events apart, as pi does.
	Position  int            `json:"position,omitempty"`
	ToolName  string         `json:"toolName"`
	Args      map[string]any `json:"args"`
	Workspace string         `json:"workspace,omitempty"`
	// Aborted makes the tool's context cancelled from the start.
	Aborted bool `json:"aborted,omitempty"`
	// AgentRun numbers the agent run within the workflow run (a session
	// runs one per prompt): an abort is the agent run's.
	AgentRun int `json:"agentRun,omitempty"`
	// Sandbox is what the run asks of the sandbox of the tool's processes.
	Sandbox *agent.SandboxConfig `json:"sandbox,omitempty"`
	// StoreID is the run's content store id (ResolveRunOutput.StoreID).
	StoreID string `json:"storeId,omitempty"`
	// DeferUpdates lets the call return its partial results with its
	// result (ExecuteOutput.Updates) instead of signalling them while
	// nobody watches: the workflow sets it for a call no sibling runs
	// beside (activities/deferred.go). An older workflow leaves it unset
	// and gets signals, as before.
	DeferUpdates bool `json:"deferUpdates,omitempty"`
}

// ExecuteOutput is the tool's result; IsError is set when the tool failed.
type ExecuteOutput struct {
	Result  agent.ToolResult `json:"result"`
	IsError bool             `json:"isError,omitempty"`
	// Duration is how long the tool ran, measured where it ran. The
	// workflow orders the ends of a parallel batch by it, as if every call
	// had started at the same instant, as pi's do.
	Duration time.Duration `json:"duration,omitempty"`
	// Updates are the partial results the call kept for its result while
	// nobody watched (ExecuteInput.DeferUpdates), as the toolUpdate
	// signals it did not send would have carried them, in order. The
	// workflow records them before the call's end.
	Updates []agentapi.ToolUpdate `json:"updates,omitempty"`
}

// FinalizeInput is one call's after hooks.
type FinalizeInput struct {
	ToolCall      agent.Content    `json:"toolCall"`
	Args          map[string]any   `json:"args"`
	Result        agent.ToolResult `json:"result"`
	IsError       bool             `json:"isError,omitempty"`
	AfterToolCall []string         `json:"afterToolCall"`
	Aborted       bool             `json:"aborted,omitempty"`
	// StoreID is the run's content store id (ResolveRunOutput.StoreID).
	StoreID string `json:"storeId,omitempty"`
}

// FinalizeOutput is the result after the hooks.
type FinalizeOutput struct {
	Result  agent.ToolResult `json:"result"`
	IsError bool             `json:"isError,omitempty"`
}
