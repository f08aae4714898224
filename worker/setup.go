package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/codec"
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

// setup is what the worker command makes of its flags and environment
// before it assembles the worker.
type setup struct {
	z          *zap.Logger
	clientOpts client.Options
	keys       codec.Keys
	st         *store.Store
	providers  []string
	hostIDFrom string
	opts       agentworker.Options
}

// setUp connects, opens the store, models, sandbox, journal and MCP config
// in the order the worker needs them (MCP's ${VAR}s are read before the
// secrets leave the environment); it exits on what a worker cannot run
// without.
func setUp(f flags, fdErr, protectErr error) *setup {
	logger, z := logging.New(*f.logLevel, *f.logJSON)
	s := &setup{z: z}
	if fdErr != nil {
		z.Sugar().Fatalw("cannot mark inherited descriptors close-on-exec: commands would get them", "reason", fdErr.Error())
	}
	if protectErr != nil {
		z.Sugar().Warnw("cannot mark the worker non-dumpable", "reason", protectErr.Error())
	}
	for _, w := range secretenv.CheckPermissions(os.Getenv) {
		z.Warn(w)
	}
	opts, keys, err := temporalenv.Connection(*f.address, *f.namespace)
	if err != nil {
		z.Fatal(err.Error())
	}
	if err := checkStoreForFleet(opts.HostPort, *f.storeSpec, flagSet("store") || os.Getenv(store.EnvStore) != ""); err != nil {
		z.Fatal(err.Error())
	}
	opts.Logger = logger
	tel, err := telemetry.Setup(context.Background(), telemetry.Options{ServiceName: "agentloop-worker", MetricsAddr: *f.metricsAddr})
	if err != nil {
		z.Fatal("telemetry: " + err.Error())
	}
	tel.Apply(&opts)
	opts.ConnectionOptions.DialOptions = append(opts.ConnectionOptions.DialOptions, workflows.WorkerDialOptions()...)
	c, err := client.Dial(opts)
	if err != nil {
		z.Fatal("dial temporal: " + err.Error())
	}
	s.clientOpts, s.keys = opts, keys

	models := llm.NewRegistry()
	scripted := llm.NewScriptedProvider()
	scripted.Add(demo.ModelID, demo.Script())
	models.Register(llm.ScriptedProviderName, scripted)
	s.providers = llm.RegisterFromEnv(models, os.Getenv)
	if s.st, err = store.Open(*f.storeSpec, store.Options{Keys: keys, Namespace: opts.Namespace}); err != nil {
		z.Fatal("open content store: " + err.Error())
	}
	if err := loadStoreID(s.st); err != nil {
		z.Fatal("open content store: " + err.Error())
	}
	mcpCfg := loadMCP(z, *f.mcpConfig) // before Unset: its ${VAR}s may name secrets
	secretenv.Unset()                  // every secret has been read: keep them from the tools' commands
	outputs, err := f.outputs.open()
	if err != nil {
		z.Fatal("bash output directory: " + err.Error())
	}
	webhooks, secretFiles, err := f.webhooks.webhooks(opts.HostPort)
	if err != nil {
		z.Fatal(err.Error())
	}
	sb := startSandbox(z, f.sandbox, opts.HostPort, *f.journalDir, *f.storeSpec, append([]string{*f.outputs.dir}, secretFiles...)...)
	j, err := journal.Open(*f.journalDir)
	if err != nil {
		z.Fatal("open tool journal: " + err.Error())
	}
	go pruneJournal(z, j, journal.Limits{MaxAge: *f.journalAge, MaxBytes: *f.journalBytes, MinAge: journal.DefaultMinAge}, outputs, f.outputs.limits())

	if *f.hostAffinity {
		id, from, err := hostID(*f.hostID, hostIDFile(*f.journalDir))
		if err != nil {
			z.Fatal(err.Error())
		}
		*f.hostID, s.hostIDFrom = id, from
		if *f.hostQueue == "" {
			*f.hostQueue = agentapi.HostQueue(*f.taskQueue, id)
		}
	} else {
		*f.hostQueue, *f.hostID = "", ""
	}
	wopts := workflows.WorkerOptions()
	wopts.WorkerStopTimeout = *f.stopTimeout + activities.ShutdownReportMargin
	if *f.versioning {
		wopts.DeploymentOptions = workflows.DeploymentOptions(*f.deployment, *f.buildID)
	}
	s.opts = agentworker.Options{
		Client: c, Store: s.st, StoreID: s.st.ID(),
		TaskQueue: *f.taskQueue, ToolQueue: *f.toolQueue, HostQueue: *f.hostQueue,
		Models: models, Tools: tools.NewRegistry(journal.Wrap(j, tools.Builtins(tools.BuiltinOptions{Sandbox: sb, BashOutputs: outputs}))...),
		Hooks: hooks.NewRegistry(), Webhooks: webhooks, Journal: j, MCP: mcpCfg, Sandbox: sb, MCPLog: z.Sugar().Infow, MCPWarn: z.Sugar().Warnw,
		Namespace: opts.Namespace, Telemetry: tel, WorkerOptions: &wopts,
		DefaultWorkspace: *f.workspace, Identity: opts.Identity, // its pollers' identity; empty: the SDK's default
	}
	if *f.hostAffinity {
		s.opts.HostStartTimeout = *f.hostStart
	}
	return s
}

func (s *setup) close() {
	s.opts.Client.Close()
	_ = s.z.Sync()
}

func (s *setup) encryption() string {
	if s.keys.Empty() {
		return "off"
	}
	return "keys " + s.keys.String() + ", encrypting with " + s.keys.Active().ID()
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

// stateDir is a directory that survives the worker, in the user's state
// directory.
func stateDir(name string) string {
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "agentloop-"+name)
	}
	return filepath.Join(home, ".local", "state", "agentloop", name)
}
