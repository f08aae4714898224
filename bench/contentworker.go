package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"os"
	"os/exec"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/store"
	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/workflows"
)

// Offload designs the bench's content worker can run.
const (
	offloadStubs = "stubs" // as shipped: large blocks stored, stubs in history
	offloadSDK   = "sdk"   // the SDK's external storage, content inline
)

// sdkStorage is the Temporal SDK's own external storage over the content
// store, for clients and workers of the -offload=sdk design.
func sdkStorage(st *store.Store) converter.ExternalStorage {
	return converter.ExternalStorage{
		Drivers:              []converter.StorageDriver{store.SDKDriver{S: st}},
		PayloadSizeThreshold: store.InlineLimit,
	}
}

// runContentWorker is the benchmark's own worker process for what the real
// worker binary cannot do: -offload=sdk measures the SDK's external storage
// against stubs, and -echo-bytes serves bench history's scripted model with
// an echo tool of that much output. Like the real worker it has the
// built-in tools and the openai-compatible provider from the environment.
func runContentWorker(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("contentworker", flag.ExitOnError)
	address := fs.String("address", "localhost:7233", "")
	queue := fs.String("queue", "", "")
	workspace := fs.String("workspace", ".", "workspace for runs that name none")
	offload := fs.String("offload", offloadStubs, "stubs (as shipped) or sdk (the SDK's external storage)")
	echoBytes := fs.Int("echo-bytes", 0, "also serve bench/history with an echo tool printing this many random characters")
	_ = fs.Parse(args)
	if *offload != offloadStubs && *offload != offloadSDK {
		return fmt.Errorf("-offload %q: want stubs or sdk", *offload)
	}
	st := benchStore()
	opts := client.Options{HostPort: *address, Logger: quiet(),
		ConnectionOptions: client.ConnectionOptions{DialOptions: workflows.WorkerDialOptions()}}
	if *offload == offloadSDK {
		opts.ExternalStorage = sdkStorage(st)
	}
	c, err := client.Dial(opts)
	if err != nil {
		return err
	}
	defer c.Close()
	models := llm.NewRegistry()
	llm.RegisterFromEnv(models, os.Getenv)
	ts := tools.Builtins(tools.BuiltinOptions{})
	if *echoBytes > 0 {
		scripted := llm.NewScriptedProvider()
		scripted.Add("history", historyScript(historyTurns))
		models.Register("bench", scripted)
		ts = append(ts, randomEchoTool{chars: *echoBytes})
	}
	w, err := agentworker.New(agentworker.Options{Client: c, Store: st, TaskQueue: *queue, Models: models,
		Tools: tools.NewRegistry(ts...), DefaultWorkspace: *workspace, Namespace: client.DefaultNamespace})
	if err != nil {
		return err
	}
	w.Activities.NoOffload = *offload == offloadSDK
	return w.Run(worker.InterruptCh())
}

// startContentWorker starts the contentworker subcommand as a process of
// its own on queue.
func startContentWorker(address, queue string, args ...string) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, append([]string{"contentworker", "-address", address, "-queue", queue}, args...)...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd, cmd.Start()
}

// randomEchoTool is bench history's echo tool with a large output: random
// base64, a different text each call, as real command output is.
type randomEchoTool struct{ chars int }

func (randomEchoTool) Definition() tools.Definition { return echoTool{}.Definition() }

func (t randomEchoTool) Execute(context.Context, tools.Call) (agent.ToolResult, error) {
	raw := make([]byte, t.chars*3/4+3)
	_, _ = rand.Read(raw)
	return agent.TextResult(base64.StdEncoding.EncodeToString(raw)[:t.chars]), nil
}
