package workflows

import (
	"encoding/json"
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/agentapi"
)

// Idempotent Updates. A client that does not hear back from an Update
// (a timeout, a dropped connection, a worker redeploy) sends it again with
// the same Update ID (agentclient does). Within one workflow run the server
// answers a repeated ID with the first one's outcome without asking the
// workflow. A session or a long run continues as new, though, and the new
// workflow run would apply the repeat again: a prompt would start a second
// run, a steer queue its message twice. So every run remembers the IDs of
// the last maxRememberedUpdates Updates it applied, with their answers,
// and hands them on in its Carry; a repeat is answered from there and
// applied once.

// maxRememberedUpdates bounds the Update IDs a run remembers and carries:
// a client retries within minutes, and a carry stays a few KB.
const maxRememberedUpdates = 64

// updateLog is the run's remembered Updates, oldest first.
type updateLog struct {
	items []agentapi.UpdateRecord
}

func (u *updateLog) find(id string) (agentapi.UpdateRecord, bool) {
	if id == "" {
		return agentapi.UpdateRecord{}, false
	}
	for _, r := range u.items {
		if r.ID == id {
			return r, true
		}
	}
	return agentapi.UpdateRecord{}, false
}

func (u *updateLog) add(r agentapi.UpdateRecord) {
	u.items = append(u.items, r)
	if n := len(u.items) - maxRememberedUpdates; n > 0 {
		u.items = slices.Clone(u.items[n:])
	}
}

// updateID is the ID of the Update ctx belongs to.
func updateID(ctx workflow.Context) string {
	if info := workflow.GetCurrentUpdateInfo(ctx); info != nil {
		return info.ID
	}
	return ""
}

// applied reports whether the Update of ctx (a validator's or a handler's)
// was applied already: a repeat from before a continue-as-new. Its
// validator then accepts it, whatever the run's state, and its handler
// answers with the first answer.
func (l *loop) applied(ctx workflow.Context) bool {
	_, ok := l.updates.find(updateID(ctx))
	return ok
}

// once applies an Update unless it was applied already, and remembers it.
// A repeat gets the first answer; a failed Update is not remembered, so a
// retry may succeed.
func once[R any](l *loop, ctx workflow.Context, apply func() (R, error)) (R, error) {
	id := updateID(ctx)
	if r, ok := l.updates.find(id); ok {
		var out R
		if len(r.Result) > 0 {
			_ = json.Unmarshal(r.Result, &out)
		}
		return out, nil
	}
	out, err := apply()
	if err == nil && id != "" {
		b, _ := json.Marshal(out)
		l.updates.add(agentapi.UpdateRecord{ID: id, Result: b})
	}
	return out, err
}

// done is the answer of an Update that answers nothing.
type done struct{}
