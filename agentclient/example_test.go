package agentclient_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/internal/harness/devserver"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/store"
	"github.com/durable-agents/agentloop/tools"
)

// Example starts an AgentLoop run, prints its tool calls as the run records
// them, and waits for its result. The README shows this code.
func Example() {
	address, workspace, stop := exampleServer() // a dev server with a worker polling agent-loop
	defer stop()

	ctx := context.Background()
	c, err := client.Dial(client.Options{HostPort: address})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	run, err := agentclient.Start(ctx, c, "example-run", agentapi.TaskQueue, agentapi.AgentLoopInput{
		LoopConfig: agent.LoopConfig{
			Model:     agent.ModelRef{Provider: "scripted", ID: "demo"},
			Tools:     []string{"ls"},
			Workspace: workspace,
		},
		Prompt: "What is in this project?",
	})
	if err != nil {
		log.Fatal(err)
	}
	err = agentclient.Watch(ctx, c, run.GetID(), run.GetRunID(), agentclient.WatchOptions{}, func(e agent.Event) {
		if e.Type == agent.EventToolExecutionEnd {
			fmt.Println("tool:", e.ToolName)
		}
	})
	if err != nil {
		log.Fatal(err)
	}
	var res agentapi.AgentLoopResult
	if err := run.Get(ctx, &res); err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.StopReason, "after", res.Turns, "turns:", agent.TextOf(res.Messages[len(res.Messages)-1].Content))
	// Output:
	// tool: ls
	// stop after 2 turns: One file: main.go.
}

// exampleServer starts what Example needs and a user runs apart: a dev
// server and a worker whose scripted model "demo" lists the workspace and
// answers. It returns the server's address, the workspace, and a stop.
func exampleServer() (address, workspace string, stop func()) {
	dir, err := os.MkdirTemp("", "agentclient-example-")
	if err != nil {
		log.Fatal(err)
	}
	workspace = filepath.Join(dir, "project")
	if err := os.MkdirAll(workspace, 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(workspace, "main.go"), []byte("package main\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	srv, err := devserver.Start(context.Background(), devserver.Options{})
	if err != nil {
		log.Fatal(err)
	}
	st, err := store.Open(filepath.Join(dir, "content"), store.Options{})
	if err != nil {
		log.Fatal(err)
	}
	scripted := llm.NewScriptedProvider()
	scripted.Add("demo", llm.Script{Responses: []llm.ScriptedResponse{
		{Content: []agent.Content{agent.ToolCall("call-ls", "ls", map[string]any{})}},
		{Content: []agent.Content{agent.Text("One file: main.go.")}},
	}})
	models := llm.NewRegistry()
	models.Register("scripted", scripted)
	c := srv.Client()
	w, err := agentworker.New(agentworker.Options{Client: c, Store: st, Models: models, Tools: tools.NewRegistry(tools.Builtins(tools.BuiltinOptions{})...)})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Start(); err != nil {
		log.Fatal(err)
	}
	return srv.FrontendHostPort(), workspace, func() {
		w.Stop()
		_ = srv.Stop()
		_ = os.RemoveAll(dir)
	}
}
