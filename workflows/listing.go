package workflows

import (
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// What `starter session list` shows of a session beyond the search
// attributes: its title (the first prompt) and when it last did something,
// kept in the memo, which every list result carries and which needs no
// registration in the namespace. A session upserts it once per run, when
// the run ends, and the Web UI's current details carry the title too.
// The memo's keys and the title are agentapi's (MemoTitle, MemoLastActivity,
// Title).
const (
	// listingChange adds the memo upsert after each run; histories of
	// sessions started before it replay without it.
	listingChange = "session-list-memo"
)

// noteRun records, after a run, the session's title and last activity in
// its memo. With clear it also removes the log excerpt that carryAtRest
// upserted in this workflow task (restClearChange).
func (s *session) noteRun(ctx workflow.Context, prompts []agent.Message, clear bool) {
	memo := map[string]any{agentapi.MemoLastActivity: workflow.Now(ctx).UTC()}
	if s.title == "" {
		// A memo with a title (set at start, or carried over by
		// continue-as-new) keeps it; the details show it when it can be
		// read here, else this run's prompt.
		title, present := memoString(ctx, agentapi.MemoTitle)
		if title == "" {
			title = agentapi.Title(prompts)
		}
		if !present {
			memo[agentapi.MemoTitle] = title
		}
		s.title = title
	}
	if workflow.GetVersion(ctx, listingChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		// A run recorded before the listing memo: the removal goes alone.
		if clear {
			_ = workflow.UpsertMemo(ctx, clearExcerpt())
		}
		return
	}
	if clear {
		// A nil value removes the field (its payload has no data).
		memo[agentapi.MemoLogExcerpt] = nil
	}
	_ = workflow.UpsertMemo(ctx, memo)
}

// memoString reads a string field of the run's memo (a continued run's
// memo is its predecessor's): present says the memo has the field, which
// is "" when this code cannot read it (an encrypted memo: the codec is the
// clients').
func memoString(ctx workflow.Context, key string) (value string, present bool) {
	info := workflow.GetInfo(ctx)
	if info.Memo == nil || info.Memo.GetFields()[key] == nil {
		return "", false
	}
	var v string
	_ = converter.GetDefaultDataConverter().FromPayload(info.Memo.GetFields()[key], &v)
	return v, true
}
