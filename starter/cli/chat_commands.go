package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
)

// chatCommands are the chat's slash commands, in the order /help lists
// them; any other line that starts with "/" is refused with this list
// rather than sent to the model.
var chatCommands = []string{"/steer", "/followup", "/abort", "/continue", "/reset", "/state",
	"/model", "/thinking", "/help", "/quit"}

// chatLine runs one line typed in the chat. Every line sends its own
// Update, with its own ID: two commands typed alike are two commands.
func (e *env) chatLine(ctx context.Context, id, line string, running bool) {
	cmd, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(rest)
	var err error
	switch cmd {
	case "":
	case "/help":
		fmt.Fprintln(e.out, chatHelp)
	case "/steer", "/followup":
		if !running {
			fmt.Fprintf(e.out, "nothing is running: %s queues a message for a running agent; type the text as a prompt instead\n", cmd)
			return
		}
		name, what := agentapi.UpdateSteer, "steering"
		if cmd == "/followup" {
			name, what = agentapi.UpdateFollowUp, "follow-up"
		}
		var st agentapi.QueueStatus
		if err = e.send(ctx, id, name, userText(rest), &st); err == nil {
			fmt.Fprintf(e.out, "%s queued (%d waiting)\n", what, st.Queued)
		}
	case "/abort":
		var st agentapi.AbortStatus
		if err = e.send(ctx, id, agentapi.UpdateAbort, agentapi.AbortRequest{Reason: rest}, &st); err == nil && st.AlreadyAborted {
			fmt.Fprintln(e.out, "already aborted")
		}
	case "/continue":
		err = e.send(ctx, id, agentapi.UpdateContinue, nil, nil)
	case "/reset":
		if err = e.send(ctx, id, agentapi.UpdateReset, nil, nil); err == nil {
			fmt.Fprintln(e.out, "the transcript and the queues are cleared")
		}
	case "/state":
		err = e.stateSummary(ctx, id, rest == "-json")
	case "/model":
		var ref agent.ModelRef
		if ref, err = agent.ParseModelRef(rest); err == nil {
			err = e.send(ctx, id, agentapi.UpdateSetModel, agentapi.SettingRequest{Model: &ref}, nil)
		}
		if err == nil {
			fmt.Fprintf(e.out, "model %s from the next model call\n", ref)
		}
	case "/thinking":
		if err = e.send(ctx, id, agentapi.UpdateSetThinkingLevel, agentapi.SettingRequest{Level: rest}, nil); err == nil {
			fmt.Fprintf(e.out, "thinking level %s from the next model call\n", rest)
		}
	default:
		if strings.HasPrefix(cmd, "/") {
			fmt.Fprintf(e.out, "unknown command %s: the commands are %s\n", cmd, strings.Join(chatCommands, " "))
			return
		}
		if running {
			// A run is going: the line steers it, as pi's interactive
			// mode does.
			if err = e.send(ctx, id, agentapi.UpdateSteer, userText(line), nil); err == nil {
				fmt.Fprintln(e.out, "       (steering the running agent)")
			}
			break
		}
		err = e.send(ctx, id, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: line}, nil)
	}
	if err != nil {
		fmt.Fprintf(e.out, "%serror: %s%s\n", e.colors.red, refusal(err), e.colors.reset)
	}
}

// refusal is what the session answered, without the Update's plumbing.
func refusal(err error) string {
	msg := err.Error()
	var x interface{ Message() string }
	if errors.As(err, &x) && x.Message() != "" {
		msg = x.Message()
	}
	return msg
}

// stateSummary prints a session's state in a few lines, or all of it as
// JSON.
func (e *env) stateSummary(ctx context.Context, id string, asJSON bool) error {
	st, err := agentclient.State(ctx, e.c, id)
	if err != nil {
		return err
	}
	if asJSON {
		b, _ := json.MarshalIndent(st, "", "  ")
		fmt.Fprintln(e.out, string(b))
		return nil
	}
	thinking := st.ThinkingLevel
	if thinking == "" {
		thinking = "off"
	}
	fmt.Fprintf(e.out, "%s: %s, %d messages, turn %d; model %s, thinking %s, tools %s\n",
		id, st.Status, st.Messages, st.Turn, st.Model, thinking, st.ToolExecution)
	u := st.Usage
	fmt.Fprintf(e.out, "  context ~%d tokens", st.ContextTokens)
	if st.ContextWindow > 0 {
		fmt.Fprintf(e.out, " of %d", st.ContextWindow)
	}
	fmt.Fprintf(e.out, "; used %d tokens in, %d out, $%.4f\n", u.Input, u.Output, u.Cost.Total)
	if n := len(st.Steering) + len(st.FollowUps); n > 0 {
		fmt.Fprintf(e.out, "  queued: %d steering, %d follow-up\n", len(st.Steering), len(st.FollowUps))
	}
	for _, p := range st.PendingApprovals {
		fmt.Fprintf(e.out, "  waiting for approval: %s %s\n", p.ToolName, p.ToolCallID)
	}
	if st.Budget.Exhausted != "" {
		fmt.Fprintln(e.out, "  budget exhausted:", st.Budget.Exhausted)
	}
	fmt.Fprintln(e.out, "  (/state -json for all of it)")
	return nil
}
