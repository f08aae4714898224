package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/workflows"
)

const chatHelp = `Type a prompt and press Enter. While a run is going, a line steers it.
  /steer TEXT   /followup TEXT   /abort [REASON]   /continue   /reset
  /state [-json]   /model PROVIDER/ID   /thinking LEVEL   /help   /quit
A tool call that needs approval asks: y (allow), n (deny), a (always), each optionally followed by a reason.
Ctrl-C (or Esc, Enter) aborts the run; Ctrl-C again detaches and leaves it running. Ctrl-C while idle leaves.`

// chat is the interactive session: it streams the session's events, sends
// each line as a prompt (or as steering while a run is going), and asks
// y/n/always for every tool call waiting for approval.
func (e *env) chat(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("session chat", flag.ContinueOnError)
	fs.SetOutput(e.err)
	var f sessionFlags
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	id := fs.Arg(0)
	if id == "" {
		run, _, err := e.startSession(ctx, "", f, "")
		if err != nil {
			return err
		}
		id = run.GetID()
	}
	// The state query waits for a worker: say so when none polls.
	waitCtx, stopExplaining := context.WithCancel(ctx)
	go e.explainStall(waitCtx, id)
	st, err := agentclient.State(ctx, e.c, id)
	stopExplaining()
	if err != nil {
		return err
	}
	fmt.Fprintf(e.out, "Session %s (%s, %d messages). %s\n", id, st.Model, st.Messages, chatHelp)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go e.explainStall(ctx, id)
	c := &chatState{running: st.Status == "running" || st.Status == "waiting_approval"}
	defer e.intr.handle(c.onInterrupt(e, ctx, id, cancel))()
	approvals := make(chan agent.Event, 64)
	watchErr := make(chan error, 1)
	go func() {
		p := e.printer(false)
		watchErr <- agentclient.Watch(ctx, e.c, id, "", e.watchOptions(st.LastEvent),
			func(ev agent.Event) {
				p.Print(ev)
				c.saw(e, ev)
				if ev.Type == agent.EventApprovalRequest {
					approvals <- ev
				}
			})
	}()
	e.promptMarker()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for {
		select {
		case err := <-watchErr:
			if ctx.Err() != nil {
				return c.left(e, id)
			}
			return err
		case ev := <-approvals:
			b, _ := json.Marshal(ev.Args)
			fmt.Fprintf(e.out, "Allow %s %s (%s)? [y/n/a] [reason]: ", ev.ToolName, b, ev.Approval.Reason)
			line, ok := <-lines
			if !ok {
				return nil
			}
			e.answer(ctx, id, ev.ToolCallID, line)
		case line, ok := <-lines:
			if !ok || strings.TrimSpace(line) == "/quit" {
				return nil
			}
			if strings.TrimSpace(line) == "\x1b" {
				c.abort(e, ctx, id) // Esc, Enter
				continue
			}
			e.chatLine(ctx, id, strings.TrimSpace(line), c.isRunning())
			if !c.isRunning() {
				e.promptMarker()
			}
		case <-ctx.Done():
			return c.left(e, id)
		}
	}
}

func (e *env) answer(ctx context.Context, id, callID, line string) {
	word, reason, _ := strings.Cut(strings.TrimSpace(line), " ")
	decision := map[string]string{"y": agent.ApprovalAllow, "yes": agent.ApprovalAllow, "n": agent.ApprovalDeny, "no": agent.ApprovalDeny,
		"a": agent.ApprovalAlways, "always": agent.ApprovalAlways}[strings.ToLower(word)]
	if decision == "" {
		decision = agent.ApprovalDeny
		reason = "Denied: the answer was not y, n or a"
	}
	if err := agentclient.Update(ctx, e.c, id, workflows.UpdateApprove,
		workflows.ApproveRequest{ToolCallID: callID, Decision: decision, Reason: reason}, nil); err != nil {
		fmt.Fprintln(e.out, "approve:", err)
	}
}
