package cli

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
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
	workspace := f.workspace
	if fs.Arg(0) != "" {
		// Coming back: what was said so far, then what waits for a person.
		if err := e.replayTranscript(ctx, id); err != nil {
			return err
		}
		workspace = e.sessionWorkspace(ctx, id)
	}
	fmt.Fprintf(e.out, "Session %s (%s, %d messages, %s). %s\n", id, st.Model, st.Messages, st.Status, chatHelp)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	waits := &waitingCalls{line: askedLine, asked: true}
	for _, p := range st.PendingApprovals {
		waits.add(p)
	}
	go e.explainStallOr(ctx, id, waits)
	busy := st.Status == agentapi.StatusRunning || st.Status == agentapi.StatusWaitingApproval
	c := &chatState{running: busy}
	defer e.intr.handle(c.onInterrupt(e, ctx, id, cancel))()
	var asks approvals
	resumePending(&asks, st)
	approvalEvents := make(chan agent.Event, 64)
	watchErr := make(chan error, 1)
	go func() {
		p := e.printer(false)
		opts := e.watchOptions(st.LastEvent)
		opts.Turn = st.Turn // coming back mid-session: the live deltas are matched by turn
		opts.Resume = busy  // and its turn may be streaming, its tools running
		watchErr <- agentclient.Watch(ctx, e.c, id, "", opts,
			func(ev agent.Event) {
				if ev.Type != agent.EventApprovalRequest { // the prompt shows it
					p.Print(ev)
				}
				c.saw(e, ev)
				waits.see(ev)
				if ev.Type == agent.EventApprovalRequest || ev.Type == agent.EventApprovalDecision {
					approvalEvents <- ev
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
		e.askNext(&asks, workspace)
		select {
		case err := <-watchErr:
			if ctx.Err() != nil {
				return c.left(e, id)
			}
			if err == nil {
				return e.sessionEnded(ctx, id) // failed, terminated or cancelled
			}
			return err
		case ev := <-approvalEvents:
			e.approvalEvent(&asks, ev)
		case line, ok := <-lines:
			if !ok || strings.TrimSpace(line) == "/quit" {
				return nil
			}
			if asks.asking {
				if asked := asks.waiting[0].ToolCallID; e.answerAsked(ctx, id, &asks, line) {
					waits.answered(asked)
				}
				continue
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

// answer sends a person's answer to a call waiting for approval and
// returns the decision sent ("" when the Update failed).
func (e *env) answer(ctx context.Context, id string, r agentapi.ApproveRequest, line string) string {
	word, reason, _ := strings.Cut(strings.TrimSpace(line), " ")
	decision := decisionWord(word)
	if decision == "" {
		decision = agent.ApprovalDeny
		reason = "Denied: the answer was not y, n or a"
	}
	if err := agentclient.Update(ctx, e.c, id, agentapi.UpdateApprove,
		agentapi.ApproveRequest{ToolCallID: r.ToolCallID, Position: r.Position, WorkflowID: r.WorkflowID, Decision: decision, Reason: reason}, nil); err != nil {
		fmt.Fprintln(e.out, "approve:", err)
		return ""
	}
	return decision
}
