package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/durable-agents/agentloop/agentapi"
)

// listSessions prints the sessions of the namespace, newest first: id,
// title (the first prompt), status, model, turns, cost and last activity,
// from the search attributes the sessions keep and their memo.
func (e *env) listSessions(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("session list", flag.ContinueOnError)
	fs.SetOutput(e.err)
	limit := fs.Int("n", 20, "show at most this many sessions")
	all := fs.Bool("all", false, "include sessions that ended (completed, failed, terminated)")
	if err := parse(fs, args, 0, "session list [-n N] [-all]"); err != nil {
		return err
	}
	query := fmt.Sprintf("WorkflowType = '%s'", agentapi.SessionWorkflow)
	if !*all {
		query += " AND ExecutionStatus = 'Running'"
	}
	dc := e.dc
	if dc == nil {
		dc = converter.GetDefaultDataConverter()
	}
	w := tabwriter.NewWriter(e.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tTITLE\tSTATUS\tMODEL\tTURNS\tCOST\tLAST ACTIVITY")
	shown := 0
	var token []byte
	for shown < *limit {
		resp, err := e.c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token, PageSize: int32(*limit)})
		if err != nil {
			return fmt.Errorf("list sessions: %w", err)
		}
		for _, x := range resp.GetExecutions() {
			if shown == *limit {
				break
			}
			sa := x.GetSearchAttributes().GetIndexedFields()
			status := str(dc, sa[agentapi.AgentStatus.GetName()])
			if x.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				status = strings.ToLower(strings.TrimPrefix(x.GetStatus().String(), "WORKFLOW_EXECUTION_STATUS_"))
			}
			var turns int64
			var cost float64
			_ = decode(dc, sa[agentapi.AgentTurns.GetName()], &turns)
			_ = decode(dc, sa[agentapi.AgentCost.GetName()], &cost)
			memo := x.GetMemo().GetFields()
			title := str(dc, memo[agentapi.MemoTitle])
			if title == "" {
				title = "(no prompt yet)"
			}
			last := x.GetStartTime().AsTime()
			var t time.Time
			if decode(dc, memo[agentapi.MemoLastActivity], &t) == nil && t.After(last) {
				last = t
			}
			if ct := x.GetCloseTime(); ct != nil && ct.AsTime().After(last) {
				last = ct.AsTime()
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t$%.4f\t%s\n", x.GetExecution().GetWorkflowId(), title, or(status, "-"),
				or(str(dc, sa[agentapi.AgentModel.GetName()]), "-"), turns, cost, ago(last))
			shown++
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if shown == 0 {
		fmt.Fprintln(e.out, "No sessions. Start one: starter session chat -workspace DIR")
	}
	return nil
}

func decode(dc converter.DataConverter, p *commonpb.Payload, v any) error {
	if p == nil {
		return fmt.Errorf("none")
	}
	return dc.FromPayload(p, v)
}

func str(dc converter.DataConverter, p *commonpb.Payload) string {
	var s string
	_ = decode(dc, p, &s)
	return s
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ago says how long ago t was, to the minute, with the time itself.
func ago(t time.Time) string {
	d := time.Since(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return t.Local().Format("2006-01-02 15:04")
}
