package main

import (
	"flag"
	"os"
	"time"

	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/internal/sandbox"
	"github.com/durable-agents/agentloop/store"
	"github.com/durable-agents/agentloop/workflows"
)

// flags are the worker's command line.
type flags struct {
	address, namespace, taskQueue, toolQueue, hostID, hostQueue *string
	hostAffinity                                                *bool
	hostStart                                                   *time.Duration
	workspace, journalDir, mcpConfig, storeSpec                 *string
	journalAge, stopTimeout                                     *time.Duration
	journalBytes                                                *int64
	versioning, setCurrent, logJSON                             *bool
	deployment, buildID, logLevel, metricsAddr                  *string
	sandbox                                                     *sandbox.Flags
	outputs                                                     outputFlags
	webhooks                                                    webhookFlags
}

func parseFlags() flags {
	var f flags
	f.address = flag.String("address", "", "Temporal frontend host:port (default $TEMPORAL_ADDRESS, else localhost:7233)")
	f.namespace = flag.String("namespace", "", "Temporal namespace (default $TEMPORAL_NAMESPACE, else default)")
	f.taskQueue = flag.String("task-queue", agentapi.TaskQueue, "task queue for workflows and activities")
	f.toolQueue = flag.String("tool-queue", "", "also run tools from this task queue (pin a run's tools to this machine with toolTaskQueue)")
	f.hostAffinity = flag.Bool("host-affinity", true, "serve this host's own task queue (-host-queue) and send the workspace tools of runs this worker resolves there, unless a run names a toolTaskQueue")
	f.hostID = flag.String("host-id", os.Getenv("AGENTLOOP_HOST_ID"), "this host's identity, which names its host queue <task-queue>-host-<id>: keep it stable across restarts of the host, e.g. a StatefulSet pod's name (default $AGENTLOOP_HOST_ID, else an id made up on the first start and kept in host-id beside the tool journal)")
	f.hostQueue = flag.String("host-queue", "", "this host's task queue (default <task-queue>-host-<host id>); overrides -host-id's queue")
	f.hostStart = flag.Duration("host-start-timeout", workflows.DefaultHostStartTimeout, "how long a run's tool call waits for a worker on its host's queue before it ends with a \"host ... is unavailable\" error and the run's tools move to a live host (a run's hostStartTimeout overrides it)")
	f.workspace = flag.String("workspace", ".", "workspace for runs that name none")
	f.journalDir = flag.String("tool-journal", stateDir("tool-journal"), "where single-attempt tools (bash, edit) record their outcomes, so a run can recover one whose worker was lost")
	f.journalAge = flag.Duration("tool-journal-max-age", 7*24*time.Hour, "remove tool journal records older than this (0: keep)")
	f.mcpConfig = flag.String("mcp", os.Getenv("AGENTLOOP_MCP_CONFIG"), "MCP servers whose tools runs may name (server__tool, server__*): a JSON file {\"mcpServers\": {...}} (README: MCP tools; default $AGENTLOOP_MCP_CONFIG)")
	f.journalBytes = flag.Int64("tool-journal-max-bytes", 1<<30, "remove the oldest tool journal records beyond this many bytes (0: no bound); records younger than 10 minutes stay")
	f.storeSpec = flag.String("store", store.DefaultSpec(), "content store for large content and transcripts: a directory, or s3://bucket/prefix?endpoint=host:port (every worker and client of a run must use the same; default $AGENTLOOP_STORE, else a directory of this host, which the worker refuses when the Temporal frontend is not on loopback)")
	f.stopTimeout = flag.Duration("stop-timeout", 20*time.Second, "on SIGTERM, how long activities in flight may go on before they are interrupted and handed to another worker; the process exits at most this plus 5s after the signal")
	f.versioning = flag.Bool("versioning", true, "use Worker Deployment Versioning: this worker is -build-id of -deployment")
	f.deployment = flag.String("deployment", workflows.DeploymentName, "worker deployment name")
	f.buildID = flag.String("build-id", workflows.BinaryBuildID(), "build ID of this worker's version (default: from the binary)")
	f.setCurrent = flag.Bool("set-current-if-none", true, "make this version the deployment's current version when it has none (a first deploy); later versions are made current with the temporal CLI")
	f.logLevel = flag.String("log-level", "info", "debug, info, warn or error")
	f.logJSON = flag.Bool("log-json", false, "log JSON lines instead of console text")
	f.metricsAddr = flag.String("metrics-addr", "", "serve Prometheus metrics (the SDK's worker metrics and the agent's) at http://ADDR/metrics, e.g. :9464; traces go where OTEL_EXPORTER_OTLP_ENDPOINT says")
	f.sandbox = sandbox.RegisterFlags(flag.CommandLine)
	f.outputs = registerOutputFlags(flag.CommandLine)
	f.webhooks = registerWebhookFlags(flag.CommandLine)
	flag.Parse()
	return f
}
