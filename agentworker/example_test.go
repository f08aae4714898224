package agentworker_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

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

// shoutParams are the arguments of shout, a Go tool of one's own.
type shoutParams struct {
	Text string `json:"text" description:"The text to upper-case"`
}

// shout upper-cases its text.
var shout = tools.New(tools.Definition{Name: "shout", Description: "Upper-case a text.", ReadOnly: true},
	func(_ context.Context, _ tools.Call, p shoutParams) (agent.ToolResult, error) {
		return agent.TextResult(strings.ToUpper(p.Text)), nil
	})

// Example assembles a worker with the built-in tools and one of its own,
// then runs a scripted model that calls it.
func Example() {
	c, st, stop := exampleServer() // a dev server and a content store
	defer stop()
	models := llm.NewRegistry()
	scripted := llm.NewScriptedProvider()
	scripted.Add("demo", llm.Script{Responses: []llm.ScriptedResponse{
		{Content: []agent.Content{agent.ToolCall("call-1", "shout", map[string]any{"text": "hello"})}},
		{Content: []agent.Content{agent.Text("Done.")}},
	}})
	models.Register("scripted", scripted)

	w, err := agentworker.New(agentworker.Options{
		Client: c, Store: st, Models: models,
		Tools: tools.NewRegistry(append(tools.Builtins(tools.BuiltinOptions{}), shout)...),
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Start(); err != nil {
		log.Fatal(err)
	}
	defer w.Stop()

	ctx := context.Background()
	run, err := agentclient.Start(ctx, c, "shout-run", agentapi.TaskQueue, agentapi.AgentLoopInput{
		LoopConfig: agent.LoopConfig{Model: agent.ModelRef{Provider: "scripted", ID: "demo"}, Tools: []string{"shout"}, Workspace: os.TempDir()},
		Prompt:     "Shout hello.",
	})
	if err != nil {
		log.Fatal(err)
	}
	var res agentapi.AgentLoopResult
	if err := run.Get(ctx, &res); err != nil {
		log.Fatal(err)
	}
	for _, m := range res.Messages {
		if m.Role == agent.RoleToolResult {
			fmt.Println(m.ToolName+":", agent.TextOf(m.Content))
		}
	}
	// Output:
	// shout: HELLO
}

// exampleServer starts a dev server and opens a store in a directory of
// its own; stop removes both.
func exampleServer() (client.Client, store.Blobs, func()) {
	dir, err := os.MkdirTemp("", "agentworker-example-")
	if err != nil {
		log.Fatal(err)
	}
	srv, err := devserver.Start(context.Background(), devserver.Options{})
	if err != nil {
		log.Fatal(err)
	}
	st, err := store.Open(dir, store.Options{})
	if err != nil {
		log.Fatal(err)
	}
	return srv.Client(), st, func() {
		_ = srv.Stop()
		_ = os.RemoveAll(dir)
	}
}
