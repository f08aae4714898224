package cli

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
)

// stallCheck is how often the starter asks why a run it follows, or an
// Update it sent, shows nothing.
const stallCheck = 3 * time.Second

// explainStall says on stderr, each new reason once, why a workflow the
// starter waits on shows nothing: no worker polls its task queue (an
// Update or a query waits for one), or an activity is being retried, with
// its attempt, next try and last failure (a model provider that is down).
// It costs a DescribeWorkflow, and a DescribeTaskQueue, every stallCheck.
// A call waiting for approval shows nothing either, but the workflow's
// description does not name it: the commands that follow a run's events
// learn it from them (explainStallOr).
func (e *env) explainStall(ctx context.Context, id string) {
	e.explainStallOr(ctx, id, nil)
}

// explainStallOr is explainStall that, when the workflow shows nothing for
// another reason, says once of each call in approvals that it waits for
// approval (approvals may be nil).
func (e *env) explainStallOr(ctx context.Context, id string, approvals *waitingCalls) {
	said := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(stallCheck):
		}
		why, key := stallReason(ctx, e.c, id)
		fresh := ""
		if why == "" && approvals != nil {
			why, key = approvals.stall(ctx, func(ctx context.Context) ([]agentapi.PendingApproval, error) {
				st, err := agentclient.State(ctx, e.c, id)
				return st.PendingApprovals, err
			})
			if approvals.asked {
				fresh = "\n"
			}
		}
		if why != "" && key != said && ctx.Err() == nil {
			fmt.Fprintf(e.err, "%s%s… %s%s\n", fresh, e.colors.dim, why, e.colors.reset)
		}
		said = key
	}
}

// stallReason is why workflow id shows nothing, or "" when it cannot tell;
// key is the reason without what changes by itself (the time to the next
// try), so that it is said once.
func stallReason(ctx context.Context, c client.Client, id string) (why, key string) {
	d, err := c.DescribeWorkflow(ctx, id, "")
	if err != nil {
		return "", ""
	}
	desc := d.RawResponse
	if desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return "", ""
	}
	for _, a := range desc.GetPendingActivities() {
		if a.GetAttempt() < 2 && a.GetLastFailure() == nil {
			continue
		}
		next := ""
		if t := a.GetNextAttemptScheduleTime(); t != nil {
			next = fmt.Sprintf(", next try in %s", time.Until(t.AsTime()).Round(time.Second))
		}
		max := ""
		if m := a.GetMaximumAttempts(); m > 0 {
			max = fmt.Sprintf("/%d", m)
		}
		key = fmt.Sprintf("%s is retrying: attempt %d%s", a.GetActivityType().GetName(), a.GetAttempt(), max)
		return fmt.Sprintf("%s%s; last failure: %s", key, next, a.GetLastFailure().GetMessage()), key
	}
	queue := desc.GetWorkflowExecutionInfo().GetTaskQueue()
	if queue == "" {
		queue = desc.GetExecutionConfig().GetTaskQueue().GetName()
	}
	tq, err := c.DescribeTaskQueue(ctx, queue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	if err != nil || len(tq.GetPollers()) > 0 {
		return "", ""
	}
	why = fmt.Sprintf("no worker polls %s: %s waits until one does (start a worker on that task queue)", queue, id)
	return why, why
}
