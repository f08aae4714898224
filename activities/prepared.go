package activities

import (
	"encoding/json"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/tools"
)

// A run with no beforeToolCall hooks prepares its tool calls with nothing
// but each call and its tool: prepareArguments and validation are pure. The
// model turn that made the calls, which runs where the run's tools are
// (ModelTurn refuses to run without them), prepares them before it returns,
// so the workflow runs no PrepareToolCall local activity for them: in
// Temporal Cloud each workflow task's local activities are a billable
// action, one per tool batch, which was the watched 10x4 run's largest
// cost beyond the floor (issue 29).

// PreparedCall is what PrepareToolCall would answer for one tool call of
// a model turn's answer when the run has no beforeToolCall hooks. Neither
// field set: the workflow asks PrepareToolCall (a tool this worker lacks,
// arguments that prepareArguments or coercion changed: those are not
// copied into history a second time).
type PreparedCall struct {
	// Ready: the arguments are valid as the model gave them.
	Ready bool `json:"ready,omitempty"`
	// Invalid is the immediate error result (invalid arguments, a failing
	// prepareArguments).
	Invalid *agent.ToolResult `json:"invalid,omitempty"`
}

// maxPreparedErrors bounds the error results a model turn returns beside
// its answer (which may itself be near the result's limit); the calls past
// it go to PrepareToolCall.
const maxPreparedErrors = 64 << 10

// prepareCalls prepares msg's tool calls, in the order of msg.ToolCalls.
func (a *Activities) prepareCalls(msg agent.Message) []PreparedCall {
	calls := msg.ToolCalls()
	if len(calls) == 0 {
		return nil
	}
	out := make([]PreparedCall, len(calls))
	errorBytes := 0
	for i, call := range calls {
		tool, ok := a.Tools.Get(call.Name)
		if !ok {
			// the workflow answers a tool the run does not have; remote and
			// sub-agent tools are in no registry and go to PrepareToolCall
			continue
		}
		preparer, _ := tool.(tools.ArgumentPreparer)
		validated, err := validateCall(call, tool.Definition().Parameters, preparer)
		if err != nil {
			r := immediate(err.Error()).Result
			if errorBytes += jsonSize(r); errorBytes <= maxPreparedErrors {
				out[i].Invalid = &r
			}
			continue
		}
		out[i].Ready = len(call.RawArguments) == 0 && sameArgs(validated, call.Arguments)
	}
	return out
}

// sameArgs says whether validation gave back the arguments as they were
// (nil and empty are the same: a tool gets {} for either).
func sameArgs(validated, given map[string]any) bool {
	if given == nil {
		given = map[string]any{}
	}
	if validated == nil {
		validated = map[string]any{}
	}
	v, err1 := json.Marshal(validated)
	g, err2 := json.Marshal(given)
	return err1 == nil && err2 == nil && string(v) == string(g)
}
