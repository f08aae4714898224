package agentworker

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/hooks"
	"github.com/durable-agents/agentloop/internal/sandbox"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/store"
	"github.com/durable-agents/agentloop/telemetry"
	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/tools/journal"
	"github.com/durable-agents/agentloop/tools/mcptools"
	"github.com/durable-agents/agentloop/workflows"
)

// Options say what a worker holds and which task queues it serves. Client
// and Store are required; the rest has defaults.
type Options struct {
	Client client.Client
	// Store keeps large content and transcripts; every worker and client
	// of a run must use the same.
	Store store.Blobs
	// StoreID is the store's id (store.Store.ID): runs carry it and the
	// activities refuse a run of another store. Empty: no check.
	StoreID string

	// TaskQueue serves the workflows and all activities; default
	// agentapi.TaskQueue.
	TaskQueue string
	// ToolQueue, when set and not TaskQueue, also serves the activities
	// (a run's toolTaskQueue pins its tools to this worker's machine).
	ToolQueue string
	// HostQueue, when set, is this host's own queue (agentapi.HostQueue):
	// it serves the activities, unversioned, and runs this worker resolves
	// send their workspace tools there. HostStartTimeout is how long a
	// tool call waits for a worker on it; zero: the workflow's default.
	HostQueue        string
	HostStartTimeout time.Duration
	// ActivitiesOnly registers no workflow: a worker of tools alone.
	ActivitiesOnly bool

	// Models, Tools and Hooks are what runs may name; nil: none.
	Models *llm.Registry
	Tools  *tools.Registry
	Hooks  *hooks.Registry
	// Webhooks calls the webhook hooks runs name, with the secrets and
	// egress policy it holds; nil: a worker without secrets, whose
	// webhooks' egress is refused loopback, private and special addresses.
	Webhooks *hooks.Webhooks
	// Journal, when set, serves journal.LookupActivity on every queue, by
	// which a run recovers a single-attempt tool whose worker was lost,
	// and journals the MCP servers' single-attempt tools.
	Journal *journal.Journal
	// MCP, when set, names MCP servers whose tools runs may name: New
	// connects to them in the background and Stop closes them. Their
	// stdio servers run in Sandbox. MCPLog and MCPWarn receive their
	// connection events and what an operator must hear of.
	MCP     *mcptools.Config
	Sandbox *sandbox.Sandbox
	MCPLog  func(msg string, keysAndValues ...any)
	MCPWarn func(msg string, keysAndValues ...any)

	// Namespace, when set, is checked for the agent search attributes
	// (agentclient.CheckSearchAttributes): runs update them when it has
	// them, and Telemetry, when set, observes pending approvals there.
	// New returns the check's error in Worker.SearchAttributesErr, not as
	// a failure: the runs go on without them.
	Namespace string
	Telemetry *telemetry.Telemetry

	// WorkerOptions for every queue; nil: workflows.WorkerOptions(). The
	// host queue's worker drops DeploymentOptions (one queue per host
	// would add a task queue to the version for every host).
	WorkerOptions *worker.Options
	// DefaultWorkspace, Identity and HeartbeatInterval go to the
	// activities (activities.Activities says what they do).
	DefaultWorkspace  string
	Identity          string
	HeartbeatInterval time.Duration
	// Activities, when set, are served instead of new ones; the options
	// that make activities (Store and StoreID, the registries, MCP,
	// Namespace and the activities' settings) are ignored.
	// A test that restarts its worker keeps its activities' registries
	// and settings (NewActivities makes them).
	Activities *activities.Activities
	// Register, when set, registers the workflows and activities on the
	// task queue's worker instead of workflows.Register: a harness adds
	// workflows and activities of its own or a variant of AgentLoop.
	Register func(w worker.Worker, acts *activities.Activities) error
}

// Worker is an assembled worker: its activities and one Temporal worker
// per task queue it serves.
type Worker struct {
	Activities *activities.Activities
	Workers    []worker.Worker
	// SearchAttributesErr is why runs will not update search attributes
	// (nil when they will or when Options.Namespace was empty);
	// ApprovalsErr why there is no approvals gauge.
	SearchAttributesErr, ApprovalsErr error

	mcp *mcptools.Manager
}

// New assembles a worker; it starts nothing but the MCP connections.
func New(o Options) (*Worker, error) {
	if o.Client == nil || o.Store == nil && o.Activities == nil {
		return nil, errors.New("agentworker: Client and Store are required")
	}
	if o.TaskQueue == "" {
		o.TaskQueue = agentapi.TaskQueue
	}
	wopts := workflows.WorkerOptions()
	if o.WorkerOptions != nil {
		wopts = *o.WorkerOptions
	}
	w := &Worker{Activities: o.Activities}
	if w.Activities == nil {
		o.setDefaults()
		if o.MCP != nil {
			w.mcp = startMCP(o)
			o.Tools.AddSource(w.mcp)
		}
		w.Activities = NewActivities(o)
		if o.Namespace != "" {
			w.SearchAttributesErr = agentclient.CheckSearchAttributes(context.Background(), o.Client, o.Namespace)
			w.Activities.SearchAttributes = w.SearchAttributesErr == nil
			if w.Activities.SearchAttributes && o.Telemetry != nil {
				w.ApprovalsErr = o.Telemetry.ObserveApprovals(o.Client, o.Namespace)
			}
		}
	}
	acts := w.Activities

	main := worker.New(o.Client, o.TaskQueue, wopts)
	switch {
	case o.Register != nil:
		if err := o.Register(main, acts); err != nil {
			w.closeMCP()
			return nil, err
		}
	case o.ActivitiesOnly:
		main.RegisterActivity(acts)
	default:
		workflows.Register(main, acts)
	}
	w.Workers = append(w.Workers, main)
	if q := o.ToolQueue; q != "" && q != o.TaskQueue {
		tw := worker.New(o.Client, q, wopts)
		tw.RegisterActivity(acts)
		w.Workers = append(w.Workers, tw)
	}
	if q := o.HostQueue; q != "" && q != o.TaskQueue && q != o.ToolQueue {
		// Unversioned: it serves activities only, which the server
		// dispatches to its pollers whatever version scheduled them.
		hopts := wopts
		hopts.DeploymentOptions = worker.DeploymentOptions{}
		hw := worker.New(o.Client, q, hopts)
		hw.RegisterActivity(acts)
		w.Workers = append(w.Workers, hw)
	}
	if o.Journal != nil {
		for _, tw := range w.Workers {
			tw.RegisterActivityWithOptions(o.Journal.LookupToolOutcome, activity.RegisterOptions{Name: journal.LookupActivity})
		}
	}
	return w, nil
}

// NewActivities returns the activities New serves, over o's client,
// store, registries and settings, without a worker, MCP connections or a
// search attribute check: for a test that stops and restarts workers on
// the same activities (Options.Activities).
func NewActivities(o Options) *activities.Activities {
	o.setDefaults()
	acts := activities.New(o.Client, o.Store, o.Models, o.Tools, o.Hooks)
	acts.StoreID = o.StoreID
	acts.DefaultWorkspace = o.DefaultWorkspace
	acts.Identity = o.Identity
	acts.HeartbeatInterval = o.HeartbeatInterval
	acts.HostQueue = o.HostQueue
	acts.HostStartTimeout = o.HostStartTimeout
	acts.Webhooks = o.Webhooks
	return acts
}

func (o *Options) setDefaults() {
	if o.Models == nil {
		o.Models = llm.NewRegistry()
	}
	if o.Tools == nil {
		o.Tools = tools.NewRegistry()
	}
	if o.Hooks == nil {
		o.Hooks = hooks.NewRegistry()
	}
	if o.Webhooks == nil {
		o.Webhooks = hooks.NewWebhooks(sandbox.Egress{}, false)
	}
}

// startMCP connects to the MCP servers in the background: a run that
// names their tools before they are up waits for them in ResolveRun.
// Their single-attempt tools are journaled, as bash and edit are.
func startMCP(o Options) *mcptools.Manager {
	mo := mcptools.Options{Log: o.MCPLog, Warn: o.MCPWarn, Sandbox: o.Sandbox}
	if j := o.Journal; j != nil {
		mo.Wrap = func(t tools.Tool) tools.Tool { return journal.Wrap(j, []tools.Tool{t})[0] }
	}
	m := mcptools.New(o.MCP, mo)
	go m.Start(context.Background())
	return m
}

// MCPServers names the MCP servers this worker connects to; nil without.
func (w *Worker) MCPServers() []string {
	if w.mcp == nil {
		return nil
	}
	return w.mcp.Servers()
}

// Start starts polling on every queue; on an error it stops those started.
func (w *Worker) Start() error {
	for i, tw := range w.Workers {
		if err := tw.Start(); err != nil {
			for _, s := range w.Workers[:i] {
				s.Stop()
			}
			w.closeMCP()
			return err
		}
	}
	return nil
}

// Run starts the worker, waits for interruptCh (worker.InterruptCh) or a
// fatal error of the task queue's worker, as worker.Worker's Run does, and
// stops it.
func (w *Worker) Run(interruptCh <-chan any) error {
	for _, tw := range w.Workers[1:] {
		if err := tw.Start(); err != nil {
			return err
		}
	}
	err := w.Workers[0].Run(interruptCh)
	w.Stop()
	return err
}

// Stop stops every queue's worker as the SDK does (activities in flight
// have WorkerStopTimeout) and closes the MCP connections.
func (w *Worker) Stop() {
	var wg sync.WaitGroup
	for _, tw := range w.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tw.Stop()
		}()
	}
	wg.Wait()
	w.closeMCP()
}

// Shutdown stops polling at once on every queue and gives activities in
// flight grace to finish; those still running then are interrupted and
// fail as retryable, for another worker to take over at once (a
// single-attempt tool is reported interrupted instead). WorkerStopTimeout
// must exceed grace by activities.ShutdownReportMargin.
func (w *Worker) Shutdown(grace time.Duration) {
	activities.BeginShutdown(w.Activities, grace)
	w.Stop()
}

func (w *Worker) closeMCP() {
	if w.mcp != nil {
		w.mcp.Close()
	}
}
