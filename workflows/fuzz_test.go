package workflows_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// FuzzAgentLoopInput decodes arbitrary workflow input as the workflow does
// (encoding/json into AgentLoopInput, then Normalize and Validate on every
// message): nothing panics, Normalize is idempotent, and a valid input stays
// valid through a JSON round trip.
func FuzzAgentLoopInput(f *testing.F) {
	for _, s := range []string{
		`{"model":{"provider":"scripted","id":"demo"},"systemPrompt":"s","prompt":"hi","tools":["read","bash"],"workspace":"/w",
		  "toolExecution":"parallel","steeringMode":"one-at-a-time","followUpMode":"all","beforeToolCall":[],"afterToolCall":["a"],
		  "stopAfterTurn":{"turns":20},"messages":[],"prompts":[],"steering":[{"content":"use tabs"}],"followUps":[]}`,
		`{"model":{"provider":"test","id":"script"},"messages":[{"role":"user","content":"plain string"},
		  {"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"toolCall","id":"c1","name":"ls","arguments":{"path":"."}}]},
		  {"role":"toolResult","toolCallId":"c1","toolName":"ls","content":[{"type":"image","data":"aGk=","mimeType":"image/png"}],"details":{"x":1},"isError":true}]}`,
		`{"model":{"provider":"test","id":"script"},"tools":"ls"}`,
		`{"prompts":[{"role":"user","content":[{"type":"video"}]}],"toolExecution":"fast","stopAfterTurn":{"turns":-1},"tools":["a","a",""]}`,
		`{"messages":[{"role":"toolResult","content":null,"details":null}],"steering":[{"role":"assistant"}]}`,
		`null`, `{}`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var in agentapi.AgentLoopInput
		if json.Unmarshal(data, &in) != nil {
			return
		}
		err1 := in.Normalize()
		normalized := in.LoopConfig
		err2 := in.Normalize()
		if fmt.Sprint(err1) != fmt.Sprint(err2) || !reflect.DeepEqual(normalized, in.LoopConfig) {
			t.Fatalf("Normalize is not idempotent: %v / %v", err1, err2)
		}
		valid := err1 == nil
		for _, list := range [][]agent.Message{in.Messages, in.Prompts, in.Steering, in.FollowUps} {
			for _, m := range list {
				if m.Validate() != nil {
					valid = false
				} else if _, err := json.Marshal(m); err != nil {
					t.Fatalf("a valid message does not marshal: %v", err)
				}
			}
		}
		if !valid {
			return
		}
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("a valid input does not marshal: %v", err)
		}
		var again agentapi.AgentLoopInput
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatalf("a valid input does not read back: %v\n%s", err, b)
		}
		if err := again.Normalize(); err != nil {
			t.Fatalf("a valid input is invalid after a round trip: %v\n%s", err, b)
		}
		for _, list := range [][]agent.Message{again.Messages, again.Prompts, again.Steering, again.FollowUps} {
			for _, m := range list {
				if err := m.Validate(); err != nil {
					t.Fatalf("a valid message is invalid after a round trip: %v\n%s", err, b)
				}
			}
		}
	})
}
