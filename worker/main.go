package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/demo"
	"github.com/durable-agents/agentloop/hooks"
	"github.com/durable-agents/agentloop/internal/logging"
	"github.com/durable-agents/agentloop/internal/sandbox"
	"github.com/durable-agents/agentloop/internal/secretenv"
	"github.com/durable-agents/agentloop/internal/temporalenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/store"
	"github.com/durable-agents/agentloop/telemetry"
	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/tools/journal"
	"github.com/durable-agents/agentloop/tools/mcptools"
	"github.com/durable-agents/agentloop/workflows"
)

func main() {
	protectErr := secretenv.Protect() // first: no other process of this user may read our memory or environ
	// Descriptors inherited from the launcher must not reach commands or
	// MCP servers (they may hold secrets, sockets, the launcher's files).
	fdErr := sandbox.CloseInheritedOnExec()
	address := flag.String("address", "", "Temporal frontend host:port (default $TEMPORAL_ADDRESS, else localhost:7233)")
	namespace := flag.String("namespace", "", "Temporal namespace (default $TEMPORAL_NAMESPACE, else default)")
	taskQueue := flag.String("task-queue", agentapi.TaskQueue, "task queue for workflows and activities")
	toolQueue := flag.String("tool-queue", "", "also run tools from this task queue (pin a run's tools to this machine with toolTaskQueue)")
	hostAffinity := flag.Bool("host-affinity", true, "serve this host's own task queue (-host-queue) and send the workspace tools of runs this worker resolves there, unless a run names a toolTaskQueue")
	hostIDFlag := flag.String("host-id", os.Getenv("AGENTLOOP_HOST_ID"), "this host's identity, which names its host queue <task-queue>-host-<id>: keep it stable across restarts of the host, e.g. a StatefulSet pod's name (default $AGENTLOOP_HOST_ID, else an id made up on the first start and kept in host-id beside the tool journal)")
	hostQueue := flag.String("host-queue", "", "this host's task queue (default <task-queue>-host-<host id>); overrides -host-id's queue")
	hostStart := flag.Duration("host-start-timeout", workflows.DefaultHostStartTimeout, "how long a run's tool call waits for a worker on its host's queue before it ends with a \"host ... is unavailable\" error and the run's tools move to a live host (a run's hostStartTimeout overrides it)")
	workspace := flag.String("workspace", ".", "workspace for runs that name none")
	journalDir := flag.String("tool-journal", stateDir("tool-journal"), "where single-attempt tools (bash, edit) record their outcomes, so a run can recover one whose worker was lost")
	journalAge := flag.Duration("tool-journal-max-age", 7*24*time.Hour, "remove tool journal records older than this (0: keep)")
	mcpConfig := flag.String("mcp", os.Getenv("AGENTLOOP_MCP_CONFIG"), "MCP servers whose tools runs may name (server__tool, server__*): a JSON file {\"mcpServers\": {...}} (README: MCP tools; default $AGENTLOOP_MCP_CONFIG)")
	journalBytes := flag.Int64("tool-journal-max-bytes", 1<<30, "remove the oldest tool journal records beyond this many bytes (0: no bound); records younger than 10 minutes stay")
	storeSpec := flag.String("store", store.DefaultSpec(), "content store for large content and transcripts: a directory, or s3://bucket/prefix?endpoint=host:port (every worker and client of a run must use the same; default $AGENTLOOP_STORE, else a directory of this host, which the worker refuses when the Temporal frontend is not on loopback)")
	stopTimeout := flag.Duration("stop-timeout", 20*time.Second, "on SIGTERM, how long activities in flight may go on before they are interrupted and handed to another worker; the process exits at most this plus 5s after the signal")
	versioning := flag.Bool("versioning", true, "use Worker Deployment Versioning: this worker is -build-id of -deployment")
	deployment := flag.String("deployment", workflows.DeploymentName, "worker deployment name")
	buildID := flag.String("build-id", workflows.BinaryBuildID(), "build ID of this worker's version (default: from the binary)")
	setCurrent := flag.Bool("set-current-if-none", true, "make this version the deployment's current version when it has none (a first deploy); later versions are made current with the temporal CLI")
	logLevel := flag.String("log-level", "info", "debug, info, warn or error")
	logJSON := flag.Bool("log-json", false, "log JSON lines instead of console text")
	metricsAddr := flag.String("metrics-addr", "", "serve Prometheus metrics (the SDK's worker metrics and the agent's) at http://ADDR/metrics, e.g. :9464; traces go where OTEL_EXPORTER_OTLP_ENDPOINT says")
	sandboxFlags := sandbox.RegisterFlags(flag.CommandLine)
	outFlags := registerOutputFlags(flag.CommandLine)
	flag.Parse()

	logger, z := logging.New(*logLevel, *logJSON)
	defer func() { _ = z.Sync() }()
	if fdErr != nil {
		z.Sugar().Fatalw("cannot mark inherited descriptors close-on-exec: commands would get them", "reason", fdErr.Error())
	}
	if protectErr != nil {
		z.Sugar().Warnw("cannot mark the worker non-dumpable", "reason", protectErr.Error())
	}
	for _, w := range secretenv.CheckPermissions(os.Getenv) {
		z.Warn(w)
	}
	opts, keys, err := temporalenv.Connection(*address, *namespace)
	if err != nil {
		z.Fatal(err.Error())
	}
	if err := checkStoreForFleet(opts.HostPort, *storeSpec, flagSet("store") || os.Getenv(store.EnvStore) != ""); err != nil {
		z.Fatal(err.Error())
	}
	opts.Logger = logger
	tel, err := telemetry.Setup(context.Background(), telemetry.Options{ServiceName: "agentloop-worker", MetricsAddr: *metricsAddr})
	if err != nil {
		z.Fatal("telemetry: " + err.Error())
	}
	tel.Apply(&opts)
	opts.ConnectionOptions.DialOptions = append(opts.ConnectionOptions.DialOptions, workflows.WorkerDialOptions()...)
	c, err := client.Dial(opts)
	if err != nil {
		z.Fatal("dial temporal: " + err.Error())
	}
	defer c.Close()

	models := llm.NewRegistry()
	scripted := llm.NewScriptedProvider()
	scripted.Add(demo.ModelID, demo.Script())
	models.Register(llm.ScriptedProviderName, scripted)
	providers := llm.RegisterFromEnv(models, os.Getenv)
	st, err := store.Open(*storeSpec, store.Options{Keys: keys, Namespace: opts.Namespace})
	if err != nil {
		z.Fatal("open content store: " + err.Error())
	}
	if err := loadStoreID(st); err != nil {
		z.Fatal("open content store: " + err.Error())
	}
	mcpCfg := loadMCP(z, *mcpConfig) // before Unset: its ${VAR}s may name secrets
	secretenv.Unset()                // every secret has been read: keep them from the tools' commands
	outputs, err := outFlags.open()
	if err != nil {
		z.Fatal("bash output directory: " + err.Error())
	}
	sb := startSandbox(z, sandboxFlags, opts.HostPort, *journalDir, *storeSpec, *outFlags.dir)
	j, err := journal.Open(*journalDir)
	if err != nil {
		z.Fatal("open tool journal: " + err.Error())
	}
	go pruneJournal(z, j, journal.Limits{MaxAge: *journalAge, MaxBytes: *journalBytes, MinAge: journal.DefaultMinAge}, outputs, outFlags.limits())
	registry := tools.NewRegistry(journal.Wrap(j, tools.Builtins(tools.BuiltinOptions{Sandbox: sb, BashOutputs: outputs}))...)
	if mcpCfg != nil {
		mcps := startMCP(z, mcpCfg, j, sb)
		defer mcps.Close()
		registry.AddSource(mcps)
	}
	acts := activities.New(c, st, models, registry, hooks.NewRegistry())
	acts.DefaultWorkspace = *workspace
	acts.Identity = opts.Identity // its pollers' identity; empty: the SDK's default
	hostIDFrom := ""
	acts.StoreID = st.ID()
	if *hostAffinity {
		id, from, err := hostID(*hostIDFlag, hostIDFile(*journalDir))
		if err != nil {
			z.Fatal(err.Error())
		}
		*hostIDFlag, hostIDFrom = id, from
		if *hostQueue == "" {
			*hostQueue = agentapi.HostQueue(*taskQueue, id)
		}
		acts.HostQueue = *hostQueue
		acts.HostStartTimeout = *hostStart
	} else {
		*hostQueue, *hostIDFlag = "", ""
	}
	if err := agentclient.CheckSearchAttributes(context.Background(), c, opts.Namespace); err != nil {
		z.Sugar().Warnw("runs will not update search attributes", "reason", err.Error())
	} else {
		acts.SearchAttributes = true
		if err := tel.ObserveApprovals(c, opts.Namespace); err != nil {
			z.Sugar().Warnw("no approvals gauge", "reason", err.Error())
		}
	}

	wopts := workflows.WorkerOptions()
	wopts.WorkerStopTimeout = *stopTimeout + activities.ShutdownReportMargin
	version := "unversioned"
	if *versioning {
		wopts.DeploymentOptions = workflows.DeploymentOptions(*deployment, *buildID)
		version = *deployment + ":" + *buildID
	}
	workers := []worker.Worker{worker.New(c, *taskQueue, wopts)}
	workflows.Register(workers[0], acts)
	if q := *toolQueue; q != "" && q != *taskQueue {
		tw := worker.New(c, q, wopts)
		tw.RegisterActivity(acts)
		workers = append(workers, tw)
	}
	if q := *hostQueue; q != "" && q != *taskQueue && q != *toolQueue {
		// Unversioned: a host queue per host would add a task queue to
		// the deployment version for every host (server 1.29 allows 100
		// a version). It serves activities only, which the server
		// dispatches to its pollers whatever version scheduled them.
		hopts := wopts
		hopts.DeploymentOptions = worker.DeploymentOptions{}
		hw := worker.New(c, q, hopts)
		hw.RegisterActivity(acts)
		workers = append(workers, hw)
	}
	for _, w := range workers {
		w.RegisterActivityWithOptions(j.LookupToolOutcome, activity.RegisterOptions{Name: journal.LookupActivity})
	}
	encryption := "off"
	if !keys.Empty() {
		encryption = "keys " + keys.String() + ", encrypting with " + keys.Active().ID()
	}
	z.Sugar().Infow("worker starting", "temporal", temporalenv.Describe(opts), "encryption", encryption,
		"taskQueue", *taskQueue, "toolQueue", *toolQueue, "hostID", *hostIDFlag, "hostIDFrom", hostIDFrom, "hostQueue", *hostQueue, "version", version,
		"store", st.Name(), "storeId", st.ID(), "sandbox", sb.Describe(), "telemetry", tel.Describe(), "providers", append([]string{llm.ScriptedProviderName}, providers...))
	for _, w := range workers {
		if err := w.Start(); err != nil {
			z.Fatal("start worker: " + err.Error())
		}
	}
	if *versioning && *setCurrent {
		go func() {
			set, err := agentclient.SetCurrentIfNone(context.Background(), c, *deployment, *buildID)
			switch {
			case err != nil:
				z.Sugar().Warnw("cannot make this version current", "reason", err.Error())
			case set:
				z.Sugar().Infow("the deployment had no current version: this one is now current", "version", version)
			}
		}()
	}
	sig := <-worker.InterruptCh()
	z.Sugar().Infow("stopping: no new tasks; activities in flight may finish", "signal", fmt.Sprint(sig), "within", stopTimeout.String())
	stopWorkers(acts, workers, *stopTimeout)
	flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tel.Shutdown(flushCtx); err != nil {
		z.Sugar().Warnw("telemetry shutdown", "reason", err.Error())
	}
	z.Info("stopped")
}

// stopWorkers stops polling at once on every worker and gives activities
// in flight grace to finish; those still running then are interrupted and
// fail as retryable, for another worker to take over at once (a
// single-attempt tool is reported interrupted instead).
func stopWorkers(acts *activities.Activities, workers []worker.Worker, grace time.Duration) {
	activities.BeginShutdown(acts, grace)
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.Stop()
		}()
	}
	wg.Wait()
}

// pruneJournal bounds the tool journal and bash's saved outputs at
// start-up and every hour.
func pruneJournal(z *zap.Logger, j *journal.Journal, l journal.Limits, outputs *tools.SavedOutputs, ol tools.OutputLimits) {
	for {
		pruneOutputs(z, outputs, ol)
		st, err := j.PruneTo(l)
		if err != nil {
			z.Sugar().Warnw("prune tool journal", "reason", err.Error())
		} else if st.Removed > 0 {
			z.Sugar().Infow("pruned tool journal", "removed", st.Removed, "kept", st.Kept, "keptBytes", st.KeptBytes)
		}
		time.Sleep(time.Hour)
	}
}

// startSandbox sets up the sandbox of bash's commands, which never see
// the worker's home, state, keys or credentials and cannot reach the
// Temporal frontend. It exits when no sandbox works here, unless the
// operator chose -sandbox=none, which is logged as a warning at every
// start.
func startSandbox(z *zap.Logger, flags *sandbox.Flags, frontend, journalDir, storeSpec string, hide ...string) *sandbox.Sandbox {
	cfg, err := flags.Config()
	if err != nil {
		z.Fatal(err.Error())
	}
	cfg.Hide = append(append(sandbox.DefaultHide(os.Getenv), journalDir), hide...)
	if !strings.Contains(storeSpec, "://") {
		cfg.Hide = append(cfg.Hide, storeSpec)
	}
	cfg.Frontends = []string{frontend}
	sb, err := sandbox.New(cfg)
	if err != nil {
		z.Fatal("tool sandbox: " + err.Error())
	}
	if sb.Mode() == sandbox.None {
		z.Warn("-sandbox=none: bash commands run unsandboxed, with the worker's rights and network: they can read its files, keys and credentials and reach the Temporal server")
	}
	return sb
}

// loadMCP reads the -mcp file; nil when there is none.
func loadMCP(z *zap.Logger, path string) *mcptools.Config {
	if path == "" {
		return nil
	}
	cfg, err := mcptools.LoadConfig(path, os.Getenv)
	if err != nil {
		z.Fatal("MCP config " + path + ": " + err.Error())
	}
	return cfg
}

// startMCP connects to the MCP servers in the background: a run that
// names their tools before they are up waits for them in ResolveRun.
// Their single-attempt tools are journaled, as bash and edit are. stdio
// servers run in bash's sandbox, one process per run workspace, unless
// their config opts out (a warning at every start; README: MCP tools).
func startMCP(z *zap.Logger, cfg *mcptools.Config, j *journal.Journal, sb *sandbox.Sandbox) *mcptools.Manager {
	m := mcptools.New(cfg, mcptools.Options{
		Wrap:    func(t tools.Tool) tools.Tool { return journal.Wrap(j, []tools.Tool{t})[0] },
		Log:     z.Sugar().Infow,
		Warn:    z.Sugar().Warnw,
		Sandbox: sb,
	})
	z.Sugar().Infow("MCP servers", "servers", m.Servers())
	go m.Start(context.Background())
	return m
}

// stateDir is a directory that survives the worker, in the user's state
// directory.
func stateDir(name string) string {
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "agentloop-"+name)
	}
	return filepath.Join(home, ".local", "state", "agentloop", name)
}
