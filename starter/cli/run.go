package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/demo"
	"github.com/durable-agents/agentloop/llm"
)

// UIAddress is where the dev server's Web UI listens.
var UIAddress = envOr("TEMPORAL_UI", "http://localhost:8233")

func (e *env) run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(e.err)
	model := fs.String("model", llm.ScriptedProviderName+"/"+demo.ModelID, "model as provider/model-id")
	toolList := fs.String("tools", strings.Join(demo.Tools, ","), "comma-separated tool names")
	mcpServers := fs.String("mcp", "", "MCP servers whose tools the run may call: comma-separated names, or the worker's MCP config file to name all of its servers; adds server__* to -tools (the worker, started with -mcp, connects to them)")
	workspace := fs.String("workspace", ".", "workspace directory (on the worker's machine)")
	system := fs.String("system", "", "system prompt")
	id := fs.String("id", "", "workflow id (default agent-<random>)")
	taskQueue := fs.String("task-queue", agentapi.TaskQueue, "task queue")
	toolQueue := fs.String("tool-queue", "", "task queue of the workers that hold the workspace")
	execution := fs.String("tool-execution", "parallel", "parallel or sequential")
	before := fs.String("before", "", "comma-separated beforeToolCall hook names")
	after := fs.String("after", "", "comma-separated afterToolCall hook names")
	stopAfter := fs.Int("stop-after", 0, "stop after this many turns (0: no limit)")
	inputFile := fs.String("input", "", "JSON file with the whole workflow input (other flags ignored)")
	asJSON := fs.Bool("json", false, "print events as JSON lines")
	detach := fs.Bool("detach", false, "start the run and print its id without following it")
	budget := fs.String("budget", "", budgetUsage)
	if err := fs.Parse(args); err != nil {
		return err
	}
	var in agentapi.AgentLoopInput
	if *inputFile != "" {
		b, err := os.ReadFile(*inputFile)
		if err != nil {
			return err
		}
		if err := decodeInput(*inputFile, b, &in); err != nil {
			return err
		}
	} else {
		ref, err := agent.ParseModelRef(*model)
		if err != nil {
			return err
		}
		ws, err := filepath.Abs(*workspace)
		if err != nil {
			return err
		}
		mcpTools, err := mcpToolPatterns(*mcpServers)
		if err != nil {
			return err
		}
		in = agentapi.AgentLoopInput{
			LoopConfig: agent.LoopConfig{
				SystemPrompt:   *system,
				Model:          ref,
				Tools:          append(split(*toolList), mcpTools...),
				ToolExecution:  agent.ExecutionMode(*execution),
				BeforeToolCall: agent.HookNames(split(*before)...),
				AfterToolCall:  agent.HookNames(split(*after)...),
				Workspace:      ws,
				ToolTaskQueue:  *toolQueue,
			},
			Prompt: strings.Join(fs.Args(), " "),
		}
		if *stopAfter > 0 {
			in.StopAfterTurn = &agent.StopRule{Turns: *stopAfter}
		}
		if in.Prompt == "" {
			return errors.New("usage: run [flags] PROMPT")
		}
	}
	if err := setBudget(&in.LoopConfig, *budget); err != nil {
		return err
	}
	if in.Model.Provider == llm.ScriptedProviderName {
		fmt.Fprintln(e.out, "Using the scripted demo model: it needs no API key; it lists, reads, greps or runs what the prompt names, or fixes the demo's test.")
		fmt.Fprintln(e.out, "For a real model pass -model anthropic/claude-sonnet-4-5 (ANTHROPIC_API_KEY), openai/gpt-5 (OPENAI_API_KEY) or ollama/qwen3:8b on the worker.")
	}
	return e.start(ctx, runID(*id), *taskQueue, in, *asJSON, *detach, nil)
}

// mcpToolPatterns turns -mcp into tool patterns, "server__*" for each
// server it names: comma-separated names, or an MCP config file, of which
// only the server names are read (its ${VAR}s are the worker's business).
func mcpToolPatterns(spec string) ([]string, error) {
	if spec == "" {
		return nil, nil
	}
	names := split(spec)
	if b, err := os.ReadFile(spec); err == nil {
		var cfg struct {
			Servers map[string]json.RawMessage `json:"mcpServers"`
		}
		if err := json.Unmarshal(b, &cfg); err != nil {
			return nil, fmt.Errorf("-mcp %s: %w", spec, err)
		}
		names = slices.Sorted(maps.Keys(cfg.Servers))
	}
	patterns := make([]string, 0, len(names))
	for _, n := range names {
		patterns = append(patterns, n+"__*")
	}
	return patterns, nil
}

// start starts a run, calls then (if any) once it is running, and follows
// its events to the end.
func (e *env) start(ctx context.Context, id, taskQueue string, in agentapi.AgentLoopInput, asJSON, detach bool, then func(client.WorkflowRun) error) error {
	run, err := agentclient.StartWithOptions(ctx, e.c, id, taskQueue, in, agentclient.StartOptions{Store: e.store})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.out, "Run %s started. Web UI: %s/namespaces/default/workflows/%s\n", run.GetID(), UIAddress, run.GetID())
	if detach {
		return nil
	}
	waitCtx, stopExplaining := context.WithCancel(ctx)
	defer stopExplaining()
	go e.explainWait(waitCtx, run.GetID(), run.GetRunID())
	if then != nil {
		if err := then(run); err != nil {
			return err
		}
	}
	followCtx, stopFollowing := context.WithCancel(ctx)
	defer stopFollowing()
	defer e.intr.handle(e.abortOrDetach(followCtx, run.GetID(), stopFollowing))()
	waits := &waitingCalls{line: answerElsewhere(run.GetID(), false)}
	go e.explainStallOr(followCtx, run.GetID(), waits)
	p := e.printer(asJSON)
	err = agentclient.Watch(followCtx, e.c, run.GetID(), run.GetRunID(), e.watchOptions(0), func(ev agent.Event) {
		p.Print(ev)
		waits.see(ev)
	})
	var res agentapi.AgentLoopResult
	if err == nil {
		if err = run.Get(followCtx, &res); err != nil {
			err = exitError{code: ExitError, msg: userMessage(err)} // the run failed: not a refusal
		}
	}
	if followCtx.Err() != nil && ctx.Err() == nil {
		e.detachedHelp(run.GetID(), false)
		return exitError{code: ExitDetached}
	}
	if err != nil {
		return err
	}
	u := res.Usage
	fmt.Fprintf(e.out, "Run ended: stopReason %s after %d turns; tokens in %d, out %d; cost $%.4f\n",
		res.StopReason, res.Turns, u.Input, u.Output, u.Cost.Total)
	if res.ErrorMessage != "" {
		fmt.Fprintln(e.out, "Error:", res.ErrorMessage)
	}
	if code := stopExit(res.StopReason); code != ExitOK {
		return exitError{code: code}
	}
	return nil
}

// waitCheck is how often the starter asks why a run no worker has taken
// yet waits: a run waiting for a build that is not current, or for a
// worker that does not exist, says so within seconds.
const waitCheck = 2 * time.Second

// explainWait tells, on stderr, why the first workflow task of a run or
// session (runID "": its latest run) waits, until a worker takes it: each
// new reason once.
func (e *env) explainWait(ctx context.Context, id, runID string) {
	said := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(waitCheck):
		}
		why, started, err := agentclient.WhyWaiting(ctx, e.c, id, runID)
		if started {
			if said != "" {
				fmt.Fprintf(e.err, "%s: a worker took it.\n", id)
			}
			return
		}
		if err == nil && why != "" && why != said {
			fmt.Fprintf(e.err, "%s has not started: %s\n", id, why)
			said = why
		}
	}
}

// demo runs the scripted demo: parallel reads, a failing test (an error
// result), a steering message, parallel edits and a passing test.
func (e *env) demo(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(e.err)
	workspace := fs.String("workspace", filepath.Join(".demo", "workspace"), "where to put the sample project (recreated)")
	asJSON := fs.Bool("json", false, "print events as JSON lines")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ws, err := filepath.Abs(*workspace)
	if err != nil {
		return err
	}
	if err := demo.PrepareWorkspace(ws); err != nil {
		return fmt.Errorf("prepare demo workspace: %w", err)
	}
	fmt.Fprintf(e.out, "Demo workspace: %s\n", ws)
	fmt.Fprintln(e.out, "Using the scripted demo model: it needs no API key and answers from a fixed script; the tools are real.")
	in := demo.Input(ws)
	steer := func(run client.WorkflowRun) error {
		st, err := agentclient.Steer(ctx, e.c, run.GetID(), demo.Steering)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.out, "Sent steering message %q (%d queued); the run takes it at its next steering poll: after the turn in progress, or before the first model call if it is there first.\n", demo.Steering, st.Queued)
		return nil
	}
	return e.start(ctx, runID(""), agentapi.TaskQueue, in, *asJSON, false, steer)
}

func split(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func runID(id string) string {
	if id != "" {
		return id
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "agent-" + hex.EncodeToString(b)
}

// budgetUsage is the help of -budget.
const budgetUsage = "limits on the run's (a session's: the whole session's) spend: maxCostUSD=1.5,maxTokens=2000000,maxTurns=40,maxToolCalls=200 (any of them)"

// setBudget sets a config's budget from -budget; "" leaves it as it is.
func setBudget(c *agent.LoopConfig, spec string) error {
	if spec == "" {
		return nil
	}
	b, err := agent.ParseBudget(spec)
	if err != nil {
		return err
	}
	c.Budget = nil
	if !b.IsZero() {
		c.Budget = b
	}
	return nil
}
