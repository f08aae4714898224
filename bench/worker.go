package main

import (
	"context"
	"flag"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/workflows"
)

// Bench scripts, served by the worker process under provider "bench".
const (
	streamChunks  = 200
	streamDelay   = 20 * time.Millisecond
	historyTurns  = 200
	historyResult = 1024 // bytes of tool output per turn
)

func streamScript() llm.Script {
	// The scripted model streams 16 characters per chunk.
	text := strings.Repeat("streaming token ", streamChunks)
	return llm.Script{ChunkDelay: streamDelay, Responses: []llm.ScriptedResponse{{Content: []agent.Content{agent.Text(text)}}}}
}

// historyScript is turns answers with the same content each: a short text
// and one tool call; then a final answer.
func historyScript(turns int) llm.Script {
	var rs []llm.ScriptedResponse
	for i := 0; i < turns; i++ {
		rs = append(rs, llm.ScriptedResponse{Content: []agent.Content{
			agent.Text("Looking at the next part of the project before deciding what to change there."),
			agent.ToolCall("call", "echo", map[string]any{"path": "src/file.go"}),
		}})
	}
	rs = append(rs, llm.ScriptedResponse{Content: []agent.Content{agent.Text("done")}})
	return llm.Script{Responses: rs}
}

// sessionPrompts bounds the prompts a session benchmark can send.
const sessionPrompts = 200

// sessionScript answers each prompt with a tool call, then a short answer.
func sessionScript(prompts int) llm.Script {
	var rs []llm.ScriptedResponse
	for i := 0; i < prompts; i++ {
		rs = append(rs,
			llm.ScriptedResponse{Content: []agent.Content{agent.Text("Checking."), agent.ToolCall("call", "echo", map[string]any{"path": "a.go"})}},
			llm.ScriptedResponse{Content: []agent.Content{agent.Text("Done with this one.")}})
	}
	return llm.Script{Responses: rs}
}

type echoTool struct{}

func (echoTool) Definition() tools.Definition {
	return tools.Definition{Name: "echo", Description: "returns a fixed text",
		Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}
}

func (echoTool) Execute(context.Context, tools.Call) (agent.ToolResult, error) {
	return agent.TextResult(strings.Repeat("x", historyResult)), nil
}

// runWorker is the worker process of a benchmark.
func runWorker(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("worker", flag.ExitOnError)
	address := fs.String("address", "localhost:7233", "")
	queue := fs.String("queue", "", "")
	_ = fs.Parse(args)
	c, err := client.Dial(client.Options{HostPort: *address, Logger: quiet(),
		ConnectionOptions: client.ConnectionOptions{DialOptions: workflows.WorkerDialOptions()}})
	if err != nil {
		return err
	}
	defer c.Close()
	scripted := llm.NewScriptedProvider()
	scripted.Add("stream", streamScript())
	scripted.Add("history", historyScript(historyTurns))
	scripted.Add("session", sessionScript(sessionPrompts))
	models := llm.NewRegistry()
	models.Register("bench", scripted)
	w, err := agentworker.New(agentworker.Options{Client: c, Store: benchStore(), TaskQueue: *queue, Models: models, Tools: tools.NewRegistry(echoTool{})})
	if err != nil {
		return err
	}
	w.Workers[0].RegisterWorkflow(StreamProbe)
	w.Workers[0].RegisterWorkflow(ChildSession)
	w.Workers[0].RegisterActivity(&probeActivities{c: c, model: scripted})
	return w.Run(worker.InterruptCh())
}
