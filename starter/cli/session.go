package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/demo"
	"github.com/durable-agents/agentloop/llm"
)

// sessionFlags are the settings of a new session.
type sessionFlags struct {
	model, tools, workspace, system, toolQueue, execution string
	approveTools, approvePatterns, approveTimeout         string
	approveMutating                                       bool
	canTurns                                              int
	contextWindow, keepRecent                             int
	noAutoCompact                                         bool
	budget, mcp                                           string
}

func (f *sessionFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.model, "model", llm.ScriptedProviderName+"/"+demo.ModelID, "model as provider/model-id")
	fs.StringVar(&f.tools, "tools", strings.Join(demo.Tools, ","), "comma-separated tool names")
	fs.StringVar(&f.workspace, "workspace", ".", "workspace directory (on the worker's machine)")
	fs.StringVar(&f.system, "system", "", "system prompt")
	fs.StringVar(&f.toolQueue, "tool-queue", "", "task queue of the workers that hold the workspace")
	fs.StringVar(&f.execution, "tool-execution", "parallel", "parallel or sequential")
	fs.StringVar(&f.approveTools, "approve-tools", "", "comma-separated tools whose calls need approval (* for all)")
	fs.BoolVar(&f.approveMutating, "approve-mutating", false, "calls of tools that are not read-only need approval")
	fs.StringVar(&f.approvePatterns, "approve-pattern", "", "tool:arg:regexp rules, separated by ';' (e.g. 'bash:command:^(rm|git push)')")
	fs.StringVar(&f.approveTimeout, "approve-timeout", "", "block a call nobody approved within this long (e.g. 30m)")
	fs.IntVar(&f.canTurns, "continue-as-new-after", 0, "continue as new after this many turns (0: when the server suggests)")
	fs.IntVar(&f.contextWindow, "context-window", 0, "the model's context window in tokens, for compaction (0: pi-ai's table)")
	fs.IntVar(&f.keepRecent, "keep-recent-tokens", 0, "tokens of recent context a compaction keeps (0: 20000)")
	fs.BoolVar(&f.noAutoCompact, "no-auto-compact", false, "compact only when asked (session compact) or when the provider overflows")
	fs.StringVar(&f.budget, "budget", "", budgetUsage)
	fs.StringVar(&f.mcp, "mcp", "", "MCP servers whose tools the session may call: comma-separated names, or the worker's MCP config file; adds server__* to -tools")
}

func (f *sessionFlags) input() (agentapi.SessionInput, error) {
	ref, err := agent.ParseModelRef(f.model)
	if err != nil {
		return agentapi.SessionInput{}, err
	}
	ws, err := filepath.Abs(f.workspace)
	if err != nil {
		return agentapi.SessionInput{}, err
	}
	mcpTools, err := mcpToolPatterns(f.mcp)
	if err != nil {
		return agentapi.SessionInput{}, err
	}
	in := agentapi.SessionInput{
		LoopConfig: agent.LoopConfig{
			SystemPrompt: f.system, Model: ref, Tools: append(split(f.tools), mcpTools...), Workspace: ws,
			ToolTaskQueue: f.toolQueue, ToolExecution: agent.ExecutionMode(f.execution),
		},
		ContinueAsNewAfterTurns: f.canTurns,
	}
	if err := setBudget(&in.LoopConfig, f.budget); err != nil {
		return in, err
	}
	if f.contextWindow != 0 || f.keepRecent != 0 || f.noAutoCompact {
		in.Compaction = &agent.CompactionConfig{ContextWindow: f.contextWindow, KeepRecentTokens: f.keepRecent, Disabled: f.noAutoCompact}
	}
	if f.approveTools != "" || f.approveMutating || f.approvePatterns != "" {
		p := &agent.ApprovalPolicy{Tools: split(f.approveTools), Mutating: f.approveMutating, Timeout: f.approveTimeout}
		for _, rule := range strings.Split(f.approvePatterns, ";") {
			if rule = strings.TrimSpace(rule); rule == "" {
				continue
			}
			parts := strings.SplitN(rule, ":", 3)
			if len(parts) != 3 {
				return in, fmt.Errorf("approve-pattern %q: want tool:arg:regexp", rule)
			}
			p.Rules = append(p.Rules, agent.ApprovalRule{Tool: parts[0], Arg: parts[1], Pattern: parts[2]})
		}
		in.Approval = p
	}
	return in, nil
}

// session runs the session subcommands.
func (e *env) session(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New(sessionUsage)
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(e.err, sessionUsage)
		return flag.ErrHelp
	case "start":
		fs := flag.NewFlagSet("session start", flag.ContinueOnError)
		fs.SetOutput(e.err)
		var f sessionFlags
		f.register(fs)
		id := fs.String("id", "", "workflow id (default session-<random>)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		prompt := strings.Join(fs.Args(), " ")
		run, st, err := e.startSession(ctx, *id, f, prompt)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.out, run.GetID())
		if prompt == "" {
			return nil
		}
		return e.watchRun(ctx, run.GetID(), st.After, 0)
	case "prompt":
		if len(args) < 3 {
			return errors.New("usage: session prompt ID TEXT")
		}
		return e.promptAndWatch(ctx, args[1], strings.Join(args[2:], " "))
	case "continue":
		if len(args) != 2 {
			return errors.New("usage: session continue ID")
		}
		turn := e.turnNow(ctx, args[1])
		var st agentapi.RunStatus
		if err := e.update(ctx, args[1], agentapi.UpdateContinue, nil, &st); err != nil {
			return err
		}
		return e.watchRun(ctx, args[1], st.After, turn)
	case "reset":
		if len(args) != 2 {
			return errors.New("usage: session reset ID")
		}
		return e.update(ctx, args[1], agentapi.UpdateReset, nil, nil)
	case "compact":
		if len(args) < 2 {
			return errors.New("usage: session compact ID [INSTRUCTIONS]")
		}
		var st agentapi.CompactStatus
		err := e.update(ctx, args[1], agentapi.UpdateCompact,
			agentapi.CompactRequest{Instructions: strings.Join(args[2:], " ")}, &st)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.out, "compacted: %d → %d tokens\n", st.TokensBefore, st.TokensAfter)
		return nil
	case "set":
		if len(args) != 4 {
			return errors.New("usage: session set ID model|thinking|steering|follow-up|tool-execution|remote-tools|hooks VALUE")
		}
		return e.set(ctx, args[1], args[2], args[3])
	case "budget":
		if len(args) != 3 {
			return errors.New("usage: session budget ID maxCostUSD=3,maxTurns=80|none")
		}
		return e.budget(ctx, args[1], args[2])
	case "chat":
		return e.chat(ctx, args[1:])
	case "list":
		return e.listSessions(ctx, args[1:])
	}
	return fmt.Errorf("unknown session command %q\n%s", args[0], sessionUsage)
}

const sessionUsage = `usage: starter session start [flags] [PROMPT] | prompt ID TEXT | continue ID | reset ID |
       compact ID [INSTRUCTIONS] | set ID model|thinking|steering|follow-up|tool-execution|remote-tools|hooks VALUE |
       budget ID LIMITS|none | chat [flags] [ID] | list [-n N] [-all]`

// budget replaces the budget of a session or run (setBudget) and prints
// what is left.
func (e *env) budget(ctx context.Context, id, spec string) error {
	b, err := agent.ParseBudget(spec)
	if err != nil {
		return err
	}
	var st agentapi.BudgetState
	if err := e.update(ctx, id, agentapi.UpdateSetBudget, b, &st); err != nil {
		return err
	}
	s := st.Spent
	fmt.Fprintf(e.out, "budget %s; spent $%.4f, %d tokens, %d turns, %d tool calls\n",
		st.Limits.String(), s.CostUSD, s.Tokens, s.Turns, s.ToolCalls)
	if st.Exhausted != "" {
		fmt.Fprintln(e.out, "still exhausted:", st.Exhausted)
	}
	return nil
}

// startSession starts a session; with a prompt it sends the prompt in the
// same request (Update-with-Start), with the command's Update ID, so that
// running the command again with the same -id and -update-id starts one
// session and one run.
func (e *env) startSession(ctx context.Context, id string, f sessionFlags, prompt string) (client.WorkflowRun, agentapi.RunStatus, error) {
	in, err := f.input()
	if err != nil {
		return nil, agentapi.RunStatus{}, err
	}
	if id == "" {
		id = strings.Replace(runID(""), "agent-", "session-", 1)
	}
	var req *agentapi.PromptRequest
	if prompt != "" {
		req = &agentapi.PromptRequest{Text: prompt}
		e.updateSent = true
		// Update-with-Start waits for a worker to take the prompt.
		waitCtx, stopExplaining := context.WithCancel(ctx)
		defer stopExplaining()
		go e.explainWait(waitCtx, id, "")
	}
	run, st, err := agentclient.StartSession(ctx, e.c, id, agentapi.TaskQueue, in, req, agentclient.UpdateOptions{ID: e.updateID, Store: e.store})
	if err != nil {
		return nil, st, err
	}
	fmt.Fprintf(e.err, "Session %s started. Web UI: %s/namespaces/default/workflows/%s\n", run.GetID(), UIAddress, run.GetID())
	return run, st, nil
}

func (e *env) set(ctx context.Context, id, what, value string) error {
	var name string
	var req agentapi.SettingRequest
	switch what {
	case "model":
		ref, err := agent.ParseModelRef(value)
		if err != nil {
			return err
		}
		name, req.Model = agentapi.UpdateSetModel, &ref
	case "thinking":
		name, req.Level = agentapi.UpdateSetThinkingLevel, value
	case "steering":
		name, req.Mode = agentapi.UpdateSetSteeringMode, value
	case "follow-up":
		name, req.Mode = agentapi.UpdateSetFollowUpMode, value
	case "tool-execution":
		name, req.Mode = agentapi.UpdateSetToolExecution, value
	case "remote-tools":
		raw, err := jsonValue("remote-tools", "array", value)
		if err != nil {
			return err
		}
		// As it is: the session names any field it does not know.
		req := struct {
			RemoteTools json.RawMessage `json:"remoteTools"`
		}{raw}
		return e.update(ctx, id, agentapi.UpdateSetRemoteTools, req, nil)
	case "hooks":
		raw, err := jsonValue("hooks", "object", value)
		if err != nil {
			return err
		}
		return e.update(ctx, id, agentapi.UpdateSetHooks, raw, nil)
	default:
		return fmt.Errorf("unknown setting %q", what)
	}
	return e.update(ctx, id, name, req, nil)
}

// jsonValue is a setting's JSON value: value itself when it is a JSON
// array or object (kind), else the file it names.
func jsonValue(what, kind, value string) (json.RawMessage, error) {
	raw := []byte(value)
	open := map[string]string{"array": "[", "object": "{"}[kind]
	if !strings.HasPrefix(strings.TrimSpace(value), open) {
		b, err := os.ReadFile(value)
		if err != nil {
			return nil, fmt.Errorf("%s: want a JSON %s or a file holding one: %w", what, kind, err)
		}
		raw = b
	}
	if !json.Valid(raw) {
		return nil, fmt.Errorf("%s: not valid JSON", what)
	}
	return raw, nil
}

// promptAndWatch prompts a session and follows the run to its agent_end.
func (e *env) promptAndWatch(ctx context.Context, id, text string) error {
	turn := e.turnNow(ctx, id)
	var st agentapi.RunStatus
	if err := e.update(ctx, id, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: text}, &st); err != nil {
		return err
	}
	return e.watchRun(ctx, id, st.After, turn)
}

// turnNow is a session's turn count before a prompt or continue, which the
// session takes only while idle: the count at the run's first event, which
// the live deltas of the run are matched to (WatchOptions.Turn).
func (e *env) turnNow(ctx context.Context, id string) int {
	st, err := agentclient.State(ctx, e.c, id)
	if err != nil {
		return 0 // the Update says what is wrong
	}
	return st.Turn
}

// watchRun prints a session's events after a sequence number (where the
// session had made turn turns) until the next agent_end.
func (e *env) watchRun(ctx context.Context, id string, after int64, turn int) error {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var end *agent.Event
	defer e.intr.handle(e.abortOrDetach(ctx, id, cancel))()
	waits := &waitingCalls{line: answerElsewhere(id, true)}
	go e.explainStallOr(ctx, id, waits)
	p := e.printer(false)
	opts := e.watchOptions(after)
	opts.Turn = turn
	err := agentclient.Watch(ctx, e.c, id, "", opts, func(ev agent.Event) {
		p.Print(ev)
		waits.see(ev)
		if ev.Type == agent.EventApprovalRequest {
			// A sub-agent's call is answered on the sub-agent's own run.
			target := id
			if ev.Approval != nil && ev.Approval.SubAgent != nil {
				target = ev.Approval.SubAgent.WorkflowID
			}
			fmt.Fprintf(e.out, "       approve with: starter approve %s %s allow|deny|always [reason]\n", target, callWithPosition(ev.ToolCallID, approvalPosition(ev)))
		}
		if ev.Type == agent.EventAgentEnd {
			e.runStatus(ev)
			end = &ev
			cancel()
		}
	})
	switch {
	case end != nil:
		return runEndError(*end)
	case errors.Is(err, context.Canceled) && ctx.Err() != nil && parent.Err() == nil:
		e.detachedHelp(id, true) // a second Ctrl-C
		return exitError{code: ExitDetached}
	case err == nil:
		return e.sessionEnded(parent, id)
	}
	return err
}

// approve answers a tool call waiting for a person. A number after the
// call's id is its position in its message, needed only when calls of one
// message share the id (a decision is never a number).
func (e *env) approve(ctx context.Context, args []string) error {
	const usage = "usage: approve ID TOOL_CALL_ID [POSITION] allow|deny|always [REASON]"
	if len(args) < 3 {
		return errors.New(usage)
	}
	r := agentapi.ApproveRequest{ToolCallID: args[1]}
	rest := args[2:]
	if pos, err := strconv.Atoi(rest[0]); err == nil {
		if pos < 1 || len(rest) < 2 {
			return errors.New(usage)
		}
		r.Position, rest = pos, rest[1:]
	}
	r.Decision, r.Reason = rest[0], strings.Join(rest[1:], " ")
	return e.update(ctx, args[0], agentapi.UpdateApprove, r, nil)
}

// callWithPosition is how a waiting call is named to starter approve: its
// id, and its position when calls of its message share the id.
func callWithPosition(id string, pos int) string {
	if pos != 0 {
		return fmt.Sprintf("%s %d", id, pos)
	}
	return id
}
