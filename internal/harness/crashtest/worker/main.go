package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/hooks"
	"github.com/durable-agents/agentloop/internal/harness/crashtest"
	"github.com/durable-agents/agentloop/store"
	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/tools/journal"
	"github.com/durable-agents/agentloop/workflows"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "crashtest worker:", err)
		os.Exit(1)
	}
}

func run() error {
	address := flag.String("address", "", "Temporal frontend host:port")
	queue := flag.String("queue", agentapi.TaskQueue, "task queue")
	dir := flag.String("dir", "", "state directory: hook markers, journal, audit log")
	variant := flag.String("variant", crashtest.VariantPlain, "workflow variant: plain, unguarded or guarded")
	hookBlock := flag.Duration("hook-block", 1500*time.Millisecond, "how long the crashtest_block before hook blocks")
	useJournal := flag.Bool("journal", false, "journal single-attempt tools and serve LookupToolOutcome")
	pause := flag.Duration("journal-pause", 0, "wait this long after journaling an outcome before reporting it")
	slowRead := flag.Duration("slow-read-timeout", crashtest.SlowReadTimeout, "slow_read's start-to-close timeout")
	bashHeartbeat := flag.Duration("bash-heartbeat", 0, "bash's Durability.HeartbeatTimeout (once tools.Durability has it)")
	readDelay := flag.Duration("store-read-delay", 0, "delay every content store read by this much and note it in dir/"+crashtest.ReadsLog)
	stopTimeout := flag.Duration("stop-timeout", 0, "on SIGTERM, how long activities in flight may go on before they are interrupted")
	hostAffinity := flag.Bool("host-affinity", true, "serve <queue>-host-<host> and send runs' workspace tools there")
	host := flag.String("host", crashtest.Host(), "the host name in the host queue, to play several hosts on one machine")
	buildID := flag.String("build-id", "", "use Worker Deployment Versioning as this build of -deployment (default: unversioned)")
	deployment := flag.String("deployment", workflows.DeploymentName, "worker deployment name, with -build-id")
	verbose := flag.Bool("v", false, "log the SDK's warnings")
	flag.Parse()
	if *address == "" || *dir == "" {
		return fmt.Errorf("-address and -dir are required")
	}

	level := slog.LevelError + 1
	if *verbose {
		level = slog.LevelWarn
	}
	var out io.Writer = os.Stderr
	c, err := client.Dial(client.Options{
		HostPort:          *address,
		Identity:          fmt.Sprintf("crashtest-%s-%d", *variant, os.Getpid()),
		Logger:            log.NewStructuredLogger(slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: level}))),
		ConnectionOptions: client.ConnectionOptions{DialOptions: workflows.WorkerDialOptions()},
	})
	if err != nil {
		return err
	}
	defer c.Close()

	var j *journal.Journal
	if *useJournal {
		if j, err = journal.Open(filepath.Join(*dir, "journal")); err != nil {
			return err
		}
	}
	hs := hooks.NewRegistry()
	hs.RegisterBefore(crashtest.BlockHook, crashtest.BlockingHook(*dir, *hookBlock))
	crashtest.StateDir = *dir
	var st store.Blobs
	if st, err = store.Open(filepath.Join(*dir, "content"), store.Options{}); err != nil {
		return err
	}
	if *readDelay > 0 {
		st = crashtest.SlowReads(st, *readDelay, *dir)
	}
	opts := workflows.WorkerOptions()
	opts.WorkerStopTimeout = *stopTimeout + activities.ShutdownReportMargin
	if *buildID != "" {
		opts.DeploymentOptions = workflows.DeploymentOptions(*deployment, *buildID)
	}
	wo := agentworker.Options{
		Client: c, Store: st, TaskQueue: *queue, WorkerOptions: &opts, Journal: j,
		Models: crashtest.Models(), Hooks: hs,
		Tools: tools.NewRegistry(crashtest.Tools(crashtest.ToolOptions{
			SlowReadTimeout:  *slowRead,
			Journal:          j,
			PauseAfterRecord: *pause,
			BashHeartbeat:    *bashHeartbeat,
		})...),
		Register: func(w worker.Worker, acts *activities.Activities) error {
			return crashtest.Register(w, acts, *variant, &crashtest.Audit{Dir: *dir})
		},
	}
	if *hostAffinity {
		wo.HostQueue = agentapi.HostQueue(*queue, *host)
	}
	w, err := agentworker.New(wo)
	if err != nil {
		return err
	}
	if err := w.Start(); err != nil {
		return err
	}
	fmt.Printf("ready pid=%d variant=%s build=%s\n", os.Getpid(), *variant, *buildID)
	sig := <-worker.InterruptCh()
	fmt.Printf("stopping pid=%d signal=%v\n", os.Getpid(), sig)
	w.Shutdown(*stopTimeout)
	fmt.Printf("stopped pid=%d\n", os.Getpid())
	return nil
}
