package agentclient

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/store"
)

// Context returns the context a run's next model turn is sent, as the
// model sees it: after a compaction the summary message comes first. It
// reads the run's context Query and the segments it names from the
// content store, and resolves every stub.
func Context(ctx context.Context, c client.Client, st store.Blobs, workflowID string) (systemPrompt string, ms []agent.Message, err error) {
	page, err := contextPage(ctx, c, workflowID, 0)
	if err != nil {
		return "", nil, err
	}
	var all []agent.Message
	if page.Offset > 0 {
		// The run holds only the context's tail; the segments hold the rest.
		if all, err = store.ReadRange(ctx, st, agent.MessageRange{Segments: page.Segments, From: 0, To: page.Offset}); err != nil {
			return "", nil, err
		}
	}
	all = append(all, page.Messages...)
	for next := page.Next; next < page.Total; next = page.Next {
		if page, err = contextPage(ctx, c, workflowID, next); err != nil {
			return "", nil, err
		}
		if page.Next <= next {
			return "", nil, fmt.Errorf("context of %s: no progress at message %d of %d", workflowID, next, page.Total)
		}
		all = append(all, page.Messages...)
	}
	ms, err = store.ResolveMessages(ctx, st, all)
	return page.SystemPrompt, ms, err
}

func contextPage(ctx context.Context, c client.Client, workflowID string, from int) (agentapi.ContextPage, error) {
	var page agentapi.ContextPage
	resp, err := c.QueryWorkflow(ctx, workflowID, "", agentapi.QueryContext, agentapi.ContextQuery{From: from})
	if err != nil {
		return page, fmt.Errorf("query context of %s: %w", workflowID, err)
	}
	if err := resp.Get(&page); err != nil {
		return page, fmt.Errorf("decode context of %s: %w", workflowID, err)
	}
	return page, nil
}

// FullTranscript returns every message a workflow id's runs added, as the
// event log recorded them (message_end events, oldest first, across
// continue-as-new), with stubs resolved: what compactions summarized
// included. The messages a run was started with are not events and are
// not in it.
func FullTranscript(ctx context.Context, c client.Client, st store.Blobs, workflowID string) ([]agent.Message, error) {
	var runs [][]agent.Event
	runID := ""
	for {
		page, err := eventsPage(ctx, c, workflowID, runID, 0, 0)
		if err != nil {
			return nil, err
		}
		events, err := Events(ctx, c, workflowID, runID)
		if err != nil {
			return nil, err
		}
		runs = append([][]agent.Event{events}, runs...)
		if page.First <= 1 || page.PreviousRunID == "" {
			break
		}
		runID = page.PreviousRunID
	}
	var out []agent.Message
	for _, events := range runs {
		for _, e := range events {
			if e.Type == agent.EventMessageEnd && e.Message != nil {
				out = append(out, *e.Message)
			}
		}
	}
	return store.ResolveMessages(ctx, st, out)
}
