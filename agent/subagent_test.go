package agent

import (
	"strings"
	"testing"
)

func TestSubAgentProfilesChecked(t *testing.T) {
	c := LoopConfig{Model: ModelRef{Provider: "p", ID: "m"}, Tools: []string{"task"},
		SubAgents: []SubAgent{
			{Name: "a b", Description: "x"},
			{Name: "ok", Description: " "},
			{Name: "ok", Description: "twice", Tools: []string{"task"}, Budget: &Budget{MaxTurns: -1}},
		},
		SubAgentLimits: &SubAgentLimits{MaxFanOut: -1}}
	err := c.Normalize()
	for _, want := range []string{
		`subAgents[0].name "a b"`, `subAgents[1] (ok): a description`, `subAgents: "ok" listed twice`,
		`subAgents[2].tools: "task" is given`, `subAgents[2]: budget.maxTurns`, `subAgentLimits: maxDepth and maxFanOut`,
		`tools: "task" is the sub-agent tool`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Normalize() = %v, want it to say %q", err, want)
		}
	}
	good := LoopConfig{Model: ModelRef{Provider: "p", ID: "m"}, SubAgents: []SubAgent{{Name: "explorer", Description: "finds"}}}
	if err := good.Normalize(); err != nil {
		t.Fatal(err)
	}
	if !good.SubAgentsOffered() {
		t.Error("a run with profiles at depth 0 is offered the task tool")
	}
	good.SubAgentDepth = 1
	if good.SubAgentsOffered() {
		t.Error("a child at the default depth limit is offered the task tool")
	}
}
