package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
)

// historyLarge is the tool output of bench history's second run, in
// characters: large enough to be stored in the content store, so that
// history holds a stub for it.
const historyLarge = 48000

// benchHistory runs a 200-turn run whose turns all carry the same content (a
// short text, one tool call, 1 KiB of tool output) and shows that history
// grows by the same amount at turn 200 as at turn 10: the model-turn
// activity gets only the messages added since its last call. Beside it, it
// computes from the same run what a design sending the whole transcript to
// every model turn would have recorded. It then runs the same with 48 KB of
// random tool output per turn (a worker of its own, the content
// benchmark's), which the workflow holds as stubs.
func benchHistory(ctx context.Context, _ []string) error {
	if os.Getenv("AGENTLOOP_BENCH_STORE") == "" {
		defer os.RemoveAll(benchStoreDir())
	}
	benchStoreDir() // before the workers start, which inherit it
	e, err := setup(ctx)
	if err != nil {
		return err
	}
	defer e.close()
	fmt.Printf("machine: %s\n", machine())
	ok, err := historyRun(ctx, e.c, e.queue, fmt.Sprintf("%d B", historyResult))
	if err != nil {
		return err
	}
	large := e.queue + "-large"
	w, err := startContentWorker(e.address, large, "-echo-bytes", fmt.Sprint(historyLarge))
	if err != nil {
		return err
	}
	defer func() { _ = w.Process.Kill(); _ = w.Wait() }()
	fmt.Println()
	okLarge, err := historyRun(ctx, e.c, large, fmt.Sprintf("%d KB", historyLarge/1000))
	if err != nil {
		return err
	}
	if !ok || !okLarge {
		return fmt.Errorf("over budget")
	}
	return nil
}

// historyRun runs the 200-turn run on queue, whose worker's echo tool
// prints output (a label), and prints its history per turn.
func historyRun(ctx context.Context, c client.Client, queue, output string) (bool, error) {
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, agentapi.AgentLoopWorkflow,
		agentapi.AgentLoopInput{
			LoopConfig: agent.LoopConfig{Model: agent.ModelRef{Provider: "bench", ID: "history"}, Tools: []string{"echo"},
				SystemPrompt: "You are a careful coding assistant."},
			Prompt: "Walk through the project.",
		})
	if err != nil {
		return false, err
	}
	var res agentapi.AgentLoopResult
	if err := run.Get(ctx, &res); err != nil {
		return false, err
	}
	events, err := history(ctx, c, run.GetID(), run.GetRunID())
	if err != nil {
		return false, err
	}
	log, err := agentclient.Events(ctx, c, run.GetID(), run.GetRunID())
	if err != nil {
		return false, err
	}
	// The whole-transcript design would carry the content itself.
	if log, err = agentclient.ResolveEvents(ctx, benchStore(), log); err != nil {
		return false, err
	}

	perTurn, inputs, total := attribute(events)
	full := fullTranscriptInputs(log)
	counterfactual := total
	for i := range inputs {
		if i < len(full) {
			counterfactual += full[i] - inputs[i]
		}
	}
	fmt.Printf("%s of tool output per turn\n", output)
	fmt.Printf("run: %d turns (%d model calls), %d history events, %d bytes of history\n\n", res.Turns, len(perTurn), len(events), total)
	fmt.Printf("%-8s %14s %22s\n", "turn", "history bytes", "model-turn input bytes")
	for _, t := range []int{1, 10, 50, 100, 150, 200} {
		if t <= len(perTurn) {
			fmt.Printf("%-8d %14d %22d\n", t, perTurn[t-1], inputs[t-1])
		}
	}
	ok := len(perTurn) >= 200
	if ok {
		ratio := float64(perTurn[199]) / float64(perTurn[9])
		fmt.Println()
		ok = verdict(ratio <= 1.5, "turn 200 / turn 10: %.2fx (budget: at most 1.5x)", ratio)
	}
	fmt.Printf("\ntotal history, this design:                    %8.1f KiB\n", float64(total)/1024)
	fmt.Printf("total history, whole transcript to each turn:  %8.1f KiB (%.1fx)\n", float64(counterfactual)/1024,
		float64(counterfactual)/float64(total))
	return ok, nil
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
