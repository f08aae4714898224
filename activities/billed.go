package activities

import (
	"context"

	"go.temporal.io/sdk/activity"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// Billed attempts. A model call that fails after the provider started
// answering (a stream cut mid-way, a worker shutting down mid-turn) was
// billed for what it read and wrote, and Temporal retries it; only the
// last attempt's outcome reaches the workflow. So each failed attempt
// that reports usage leaves the total billed so far in the activity's
// heartbeat details (LiveProgress.Billed), which the server keeps for the
// next attempt; every beat of that attempt carries it on. The attempt that
// ends the activity hands it to the workflow: ModelTurnOutput.Retried, or
// the second detail of its error. The run's usage totals, and so its
// budget, count it. An attempt whose worker died says nothing: its usage
// is unknown.

// priorBilled is what earlier attempts of this model turn were billed.
func priorBilled(ctx context.Context) agent.Usage {
	if !activity.HasHeartbeatDetails(ctx) {
		return agent.Usage{}
	}
	var p agentapi.LiveProgress
	if activity.GetHeartbeatDetails(ctx, &p) != nil || p.Billed == nil {
		return agent.Usage{}
	}
	return *p.Billed
}

// recordBilled adds a failed attempt's usage to what the next attempt will
// find, and returns the new total. A usage of zero (a call refused before
// the model read anything) records nothing.
func (a *Activities) recordBilled(ctx context.Context, live *liveStream, prior agent.Usage, failed *agent.Message) agent.Usage {
	if failed == nil || failed.Usage == nil || *failed.Usage == (agent.Usage{}) {
		return prior
	}
	total := prior.Add(*failed.Usage)
	info := activity.GetInfo(ctx)
	p := agentapi.LiveProgress{Attempt: info.Attempt, Turn: live.turn, Seq: live.position(), Billed: &total}
	rpcCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), heartbeatTimeout)
	defer cancel()
	if err := a.Client.RecordActivityHeartbeat(rpcCtx, info.TaskToken, p); err != nil {
		activity.GetLogger(ctx).Warn("Could not record a failed attempt's usage", "Error", err)
	}
	return total
}

func usagePtr(u agent.Usage) *agent.Usage {
	if u == (agent.Usage{}) {
		return nil
	}
	return &u
}

// keepBilled makes every heartbeat ctx's activity records outside its live
// stream (the content store's retries, storage.go) carry what earlier
// attempts were billed: the server keeps only the last heartbeat's
// details, and one without them would leave the next attempt nothing to
// count.
func keepBilled(ctx context.Context) (context.Context, agent.Usage) {
	prior := priorBilled(ctx)
	if prior == (agent.Usage{}) {
		return ctx, prior
	}
	p := agentapi.LiveProgress{Attempt: activity.GetInfo(ctx).Attempt, Billed: &prior}
	return context.WithValue(ctx, heartbeatDetailsKey{}, p), prior
}

type heartbeatDetailsKey struct{}

// recordHeartbeat heartbeats with the details keepBilled put in ctx, if any.
func recordHeartbeat(ctx context.Context) {
	if d := ctx.Value(heartbeatDetailsKey{}); d != nil {
		activity.RecordHeartbeat(ctx, d)
		return
	}
	activity.RecordHeartbeat(ctx)
}
