package telemetry

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// ApprovalsQuery finds the runs waiting for a person to approve a tool
// call: the status the workflows keep in the AgentStatus search attribute.
const ApprovalsQuery = `AgentStatus = 'waiting_approval' AND ExecutionStatus = 'Running'`

// approvalsRefresh bounds how often a scrape asks the server.
const approvalsRefresh = 10 * time.Second

// ObserveApprovals adds the agentloop_approvals_waiting gauge: how many
// runs of the namespace wait for an approval now. A wait is a workflow
// state that may outlive every worker's cache, so the gauge counts what
// visibility says rather than what this worker has in memory; every
// worker reports the same fleet-wide number (aggregate with max, not sum).
// It needs the agent search attributes; without metrics it does nothing.
func (t *Telemetry) ObserveApprovals(c client.Client, namespace string) error {
	if t.mp == nil {
		return nil
	}
	var mu sync.Mutex
	var last time.Time
	var count int64
	var ok bool
	_, err := t.meter.Int64ObservableGauge("agentloop.approvals.waiting",
		metric.WithDescription("Runs waiting for a tool call approval (from visibility: "+ApprovalsQuery+")"),
		metric.WithInt64Callback(func(ctx context.Context, o metric.Int64Observer) error {
			mu.Lock()
			defer mu.Unlock()
			if time.Since(last) >= approvalsRefresh {
				ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				resp, err := c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: namespace, Query: ApprovalsQuery})
				ok = err == nil
				if ok {
					count = resp.GetCount()
					last = time.Now()
				}
			}
			if ok {
				o.Observe(count)
			}
			return nil
		}))
	return err
}
