package main

import (
	"context"
	"encoding/json"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/workflows"
)

// benchHistory runs a 200-turn run whose turns all carry the same content (a
// short text, one tool call, 1 KiB of tool output) and shows that history
// grows by the same amount at turn 200 as at turn 10: the model-turn
// activity gets only the messages added since its last call. Beside it, it
// computes from the same run what a design sending the whole transcript to
// every model turn would have recorded.
func benchHistory(ctx context.Context, _ []string) error {
	e, err := setup(ctx)
	if err != nil {
		return err
	}
	defer e.close()
	fmt.Printf("machine: %s\n", machine())
	run, err := e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: e.queue}, workflows.AgentLoopWorkflow,
		workflows.AgentLoopInput{
			LoopConfig: agent.LoopConfig{Model: agent.ModelRef{Provider: "bench", ID: "history"}, Tools: []string{"echo"},
				SystemPrompt: "You are a careful coding assistant."},
			Prompt: "Walk through the project.",
		})
	if err != nil {
		return err
	}
	var res workflows.AgentLoopResult
	if err := run.Get(ctx, &res); err != nil {
		return err
	}
	events, err := history(ctx, e.c, run.GetID(), run.GetRunID())
	if err != nil {
		return err
	}
	log, err := agentclient.Events(ctx, e.c, run.GetID(), run.GetRunID())
	if err != nil {
		return err
	}

	perTurn, inputs, total := attribute(events)
	full := fullTranscriptInputs(log)
	counterfactual := total
	for i := range inputs {
		if i < len(full) {
			counterfactual += full[i] - inputs[i]
		}
	}
	fmt.Printf("run: %d turns (%d model calls), %d history events, %d bytes of history\n\n", res.Turns, len(perTurn), len(events), total)
	fmt.Printf("%-8s %14s %22s\n", "turn", "history bytes", "model-turn input bytes")
	for _, t := range []int{1, 10, 50, 100, 150, 200} {
		if t <= len(perTurn) {
			fmt.Printf("%-8d %14d %22d\n", t, perTurn[t-1], inputs[t-1])
		}
	}
	if len(perTurn) >= 200 {
		fmt.Printf("\nturn 200 / turn 10: %.2fx (budget: at most 1.5x)\n", float64(perTurn[199])/float64(perTurn[9]))
	}
	fmt.Printf("\ntotal history, this design:                    %8.1f KiB\n", float64(total)/1024)
	fmt.Printf("total history, whole transcript to each turn:  %8.1f KiB (%.1fx)\n", float64(counterfactual)/1024,
		float64(counterfactual)/float64(total))
	return nil
}

func history(ctx context.Context, c client.Client, id, runID string) ([]*historypb.HistoryEvent, error) {
	iter := c.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var out []*historypb.HistoryEvent
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// attribute splits history into turns, each starting at a ModelTurn
// activity's scheduling, and returns each turn's bytes, each ModelTurn
// input's bytes and the total.
func attribute(events []*historypb.HistoryEvent) (perTurn, inputs []int, total int) {
	for _, ev := range events {
		n := proto.Size(ev)
		total += n
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "ModelTurn" {
			perTurn = append(perTurn, 0)
			inputs = append(inputs, proto.Size(a.GetInput()))
		}
		if len(perTurn) > 0 {
			perTurn[len(perTurn)-1] += n
		}
	}
	return perTurn, inputs, total
}

// fullTranscriptInputs returns, for each model call of a run, the JSON size
// of the whole context it was given: every message before its answer.
func fullTranscriptInputs(log []agent.Event) []int {
	var sizes []int
	context := 0
	for _, e := range log {
		if e.Type != agent.EventMessageEnd || e.Message == nil {
			continue
		}
		if e.Message.Role == agent.RoleAssistant {
			sizes = append(sizes, context)
		}
		b, _ := json.Marshal(e.Message)
		context += len(b)
	}
	return sizes
}
