package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/hooks"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/store"
	"github.com/durable-agents/agentloop/tools"
)

// Activities are the agent loop's activities and what they depend on.
type Activities struct {
	Models *llm.Registry
	Tools  *tools.Registry
	Hooks  *hooks.Registry
	// Webhooks calls the runs' webhook hooks (remotehooks.go); nil: this
	// worker calls none.
	Webhooks *hooks.Webhooks
	// Client lets activities talk to their own workflow: tools queue
	// messages and report partial results with signals.
	Client client.Client
	// Store keeps large content and transcript segments outside history.
	Store store.Blobs
	// StoreID is Store's id (store.Store.ID): ResolveRun hands it to the
	// run, and the activities that read or write a run's content refuse a
	// run of another store (checkStore). Empty: no check.
	StoreID string
	// HeartbeatInterval, when set, is how often running tools heartbeat
	// when nobody watches, and how long the first heartbeat waits. Zero:
	// half the call's heartbeat timeout. Heartbeats only prove liveness:
	// an abort reaches a running activity from its run's history
	// (cancelfeed.go), so a shorter interval costs heartbeats and buys
	// nothing but a second path for cancellation.
	HeartbeatInterval time.Duration
	// DefaultWorkspace is the directory tools work in when a run names
	// none.
	DefaultWorkspace string

	// SearchAttributes is set by the worker when the namespace has the
	// agent search attributes (AgentStatus, AgentModel, AgentTurns,
	// AgentCost); upserting unknown ones would fail workflow tasks.
	SearchAttributes bool
	// NoOffload keeps large content inline instead of storing it: only
	// for measuring the alternative design (the SDK's own external
	// storage, store.SDKDriver) against stubs.
	NoOffload bool
	// NoContextCache makes every model turn read its context from the
	// store's segments, as a worker that never ran the run before does.
	NoContextCache bool

	// HostQueue is the task queue this worker serves for its host alone
	// (the worker registers it): runs that name no toolTaskQueue run their
	// workspace tools there, on the host that resolved them, which holds
	// their workspace. Empty: tools run on the run's task queue.
	HostQueue string
	// HostStartTimeout is how long a run's tool call waits for a worker
	// on its host queue (ResolveRun tells the run; its hostStartTimeout
	// overrides it). Zero: the workflow's default.
	HostStartTimeout time.Duration
	// Identity is the identity this worker polls with (worker.Options or
	// client.Options Identity), to tell itself from other workers in a
	// task queue's pollers (workspace.go). Empty: the SDK's default.
	Identity string

	contexts *contextCache
	tools    running
	feeds    cancelFeeds
	stop     shutdown
}

// New returns activities over the given registries.
func New(c client.Client, st store.Blobs, models *llm.Registry, ts *tools.Registry, hs *hooks.Registry) *Activities {
	return &Activities{
		Store:    st,
		Models:   models,
		Tools:    ts,
		Hooks:    hs,
		Client:   c,
		contexts: newContextCache(256, 512<<20),
	}
}

// ResolveRun checks a run's model, tools and hooks against this worker's
// registries and returns what the workflow needs to schedule the tools. It
// runs once at the start of each workflow run, so a typo fails the run at
// once with a non-retryable error instead of surfacing turns later, while
// what this worker lacks and another may have is the retryable
// ConfigDrift (drift.go).
func (a *Activities) ResolveRun(ctx context.Context, in ResolveRunInput) (ResolveRunOutput, error) {
	modelErr := a.resolveModel(in)
	defs, toolsErr := a.resolveTools(in)
	var hooksErr error
	if err := a.Hooks.Check(in.BeforeToolCall, in.AfterToolCall); err != nil {
		// Hooks are registered in code: a worker without one is of
		// another build or configuration.
		hooksErr = a.lacks("%s", strings.TrimPrefix(err.Error(), "unknown "))
	}
	for _, n := range in.RemoteTools {
		if _, ok := a.Tools.Get(n); ok {
			// What the worker registers is fixed by its build and
			// configuration: a clash is the run's input.
			return ResolveRunOutput{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
				"invalid input: remoteTools: %q is a tool of this worker's registry: a remote tool needs a name of its own", n),
				agentapi.ErrInvalidInput, nil)
		}
	}
	// Bad input fails at once, before drift sends the run elsewhere.
	var appErr *temporal.ApplicationError
	for _, err := range []error{modelErr, toolsErr} {
		if errors.As(err, &appErr) && appErr.NonRetryable() {
			return ResolveRunOutput{}, err
		}
	}
	if err := cmp.Or(modelErr, toolsErr, hooksErr); err != nil {
		return ResolveRunOutput{}, err
	}
	missing, elsewhere := a.checkWorkspace(ctx, in, defs)
	if missing != "" && in.RequireWorkspace {
		return ResolveRunOutput{}, a.workspaceError(missing, elsewhere)
	}
	out := ResolveRunOutput{Tools: make([]ToolInfo, 0, len(defs)), SearchAttributes: a.SearchAttributes,
		ContextWindow: llm.Limits(in.Model.ID).ContextWindow}
	for _, d := range defs {
		out.Tools = append(out.Tools, ToolInfo{
			Name:             d.Name,
			ExecutionMode:    d.ExecutionMode,
			ReadOnly:         d.ReadOnly,
			Workspace:        d.Workspace,
			Retry:            string(d.Durability.Retry),
			Timeout:          d.Durability.Timeout,
			MaxAttempts:      d.Durability.Attempts(),
			HeartbeatTimeout: d.Durability.HeartbeatTimeout,
		})
	}
	out.HostQueue = a.hostQueueFor(in.Workspace)
	out.HostStartTimeout = a.HostStartTimeout
	out.StoreID = a.StoreID
	out.WorkspaceMissing, out.WorkspaceElsewhere = missing, elsewhere
	return out, nil
}

// hostQueueFor is the queue of this worker's host when it holds the run's
// workspace (the directory exists here), else "": a worker that does not
// hold it leaves the run's tools to the run's task queue, as before host
// affinity.
func (a *Activities) hostQueueFor(workspace string) string {
	if a.HostQueue == "" {
		return ""
	}
	if workspace == "" {
		workspace = a.DefaultWorkspace
	}
	if st, err := os.Stat(workspace); err != nil || !st.IsDir() {
		return ""
	}
	return a.HostQueue
}
