package workflows

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
)

// A run started from another run's messages (pi's continue-from-messages
// with a result's messages) receives stubs of that run's scope. The content
// sweep deletes a scope once its workflow is gone, so before its first run
// a workflow copies such blobs into its own scope (AdoptContent) and names
// the copies: from then on nothing it holds depends on another run. Update
// validators refuse stubs of another scope (checkOwnStubs), so a queued
// message or prompt never brings one in later.

// adoptChange guards the copy: histories recorded before it took such
// stubs as they were.
const adoptChange = "adopt-foreign-content"

// adoptInput copies the blobs of other scopes that the lists' stubs name
// into this workflow's scope and points the stubs at the copies. A blob
// missing from the store fails the run as invalid input, naming it.
// adopted reports whether any stub changed.
func (l *loop) adoptInput(ctx workflow.Context, lists ...*[]agent.Message) (adopted bool, err error) {
	own := workflow.GetInfo(ctx).WorkflowExecution.ID
	var refs []agent.BlobRef
	for _, ms := range lists {
		refs = append(refs, foreignRefs(own, *ms)...)
	}
	if len(refs) == 0 {
		return false, nil
	}
	if workflow.GetVersion(ctx, adoptChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return false, nil
	}
	f := l.adoptContent(fmt.Sprintf("copy %d blobs of other runs into this run's scope", len(refs)), refs)
	l.wait(ctx, f)
	if err := f.Get(ctx, nil); err != nil {
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) {
			return false, errors.New(appErr.Error())
		}
		return false, err
	}
	for _, ms := range lists {
		*ms = ownStubs(own, refs, *ms)
	}
	return true, nil
}

// adoptContent starts the AdoptContent activity that copies refs into this
// run's scope; summary says whose blobs they are.
func (l *loop) adoptContent(summary string, refs []agent.BlobRef) workflow.Future {
	actx := workflow.WithActivityOptions(l.baseCtx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		Summary:             summary,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			MaximumInterval:        time.Minute,
			NonRetryableErrorTypes: []string{activities.ErrContentMissing, activities.ErrContentCorrupt},
		},
	})
	return workflow.ExecuteActivity(actx, a.AdoptContent, activities.AdoptInput{Refs: refs, StoreID: l.storeID})
}

// replaceContext makes ms, the input's messages with their stubs adopted,
// the transcript, which holds nothing else before the first run.
func (l *loop) replaceContext(ms []agent.Message) {
	l.context = agent.NewTranscript(l.context.SystemPrompt)
	l.context.Append(ms...)
}

// foreignRefs returns the references of ms's stubs whose scope is not own,
// each once.
func foreignRefs(own string, ms []agent.Message) []agent.BlobRef {
	var refs []agent.BlobRef
	add := func(r agent.BlobRef) {
		if r.Scope != own && !slices.Contains(refs, r) {
			refs = append(refs, r)
		}
	}
	for _, m := range ms {
		for _, c := range m.Content {
			if c.Blob != nil {
				add(*c.Blob)
			}
		}
		if r, ok := agent.DetailsBlob(m.Details); ok {
			add(r)
		}
	}
	return refs
}

// ownStubs returns ms with every stub of refs (the blobs copied) pointing
// at the copy in scope own. A stub that came in while the copy ran (a
// Signal is not validated) is not among refs and stays as it is.
func ownStubs(own string, refs []agent.BlobRef, ms []agent.Message) []agent.Message {
	out := slices.Clone(ms)
	for i, m := range out {
		if !slices.ContainsFunc(foreignRefs(own, []agent.Message{m}), func(r agent.BlobRef) bool { return slices.Contains(refs, r) }) {
			continue
		}
		m.Content = slices.Clone(m.Content)
		for j, c := range m.Content {
			if c.Blob != nil && slices.Contains(refs, *c.Blob) {
				r := *c.Blob
				r.Scope = own
				m.Content[j].Blob = &r
			}
		}
		if r, ok := agent.DetailsBlob(m.Details); ok && slices.Contains(refs, r) {
			r.Scope = own
			m.Details = agent.StubDetails(r)
		}
		out[i] = m
	}
	return out
}

// foreignSignalChange guards dropping Signals that hold stubs of another
// scope: histories before it queued them, or started a run with them.
const foreignSignalChange = "drop-foreign-signal"

// dropsForeign drops a Signal whose messages hold stubs of another scope,
// with a note, as checkOwnStubs refuses such Updates: a Signal cannot be
// refused, and the content it names is lost once its run is swept.
func (l *loop) dropsForeign(ctx workflow.Context, channel string, ms []agent.Message) bool {
	err := checkOwnStubs(ctx, ms)
	if err == nil || workflow.GetVersion(ctx, foreignSignalChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return false
	}
	n := 0
	for _, m := range ms {
		n += contentBytes(m.Content)
	}
	l.dropSignal(channel, n, "stored content of another run", err)
	return true
}

// checkOwnStubs refuses messages holding stubs of another scope: a message
// sent to a running workflow cannot have its content copied before the
// validator answers, and content of another run would be lost when that
// run is deleted and swept.
func checkOwnStubs(ctx workflow.Context, ms []agent.Message) error {
	own := workflow.GetInfo(ctx).WorkflowExecution.ID
	if refs := foreignRefs(own, ms); len(refs) > 0 {
		return fmt.Errorf("the message holds stored content of workflow %q (sha256:%s); a message sent to a running workflow may hold only content stored for it: send the content inline, or start a run with these messages in its input, which copies their content",
			refs[0].Scope, refs[0].SHA256)
	}
	return nil
}
