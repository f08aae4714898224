package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"

	"github.com/durable-agents/agentloop/llm"
)

// Scenario is one conformance scenario (see the conformance README).
type Scenario struct {
	Name          string                 `json:"name"`
	Description   string                 `json:"description"`
	Prompt        *string                `json:"prompt"`
	SystemPrompt  string                 `json:"systemPrompt"`
	ToolExecution string                 `json:"toolExecution"`
	SteeringMode  string                 `json:"steeringMode"`
	FollowUpMode  string                 `json:"followUpMode"`
	Queued        Queued                 `json:"queued"`
	StopAfterTurn int                    `json:"stopAfterTurn"`
	Model         []llm.ScriptedResponse `json:"model"`
	Tools         []ToolSpec             `json:"tools"`
	Hooks         Hooks                  `json:"hooks"`
	// RemoteHooks serves the hook rules as remote hooks: activities
	// (agent.ActivityHook) on the remote tools' task queue, served by the
	// same worker as the remote tools (remote.go, typescript.go). pi's
	// reference runner ignores it: to pi they are its beforeToolCall and
	// afterToolCall.
	RemoteHooks bool `json:"remoteHooks"`
}

// Queued holds texts queued as user messages before the run starts.
type Queued struct {
	Steer    []string `json:"steer"`
	FollowUp []string `json:"followUp"`
}

// ToolSpec is a scenario's test tool.
type ToolSpec struct {
	Name             string                     `json:"name"`
	Description      *string                    `json:"description"`
	Parameters       json.RawMessage            `json:"parameters"`
	ExecutionMode    string                     `json:"executionMode"`
	PrepareArguments *PrepareArguments          `json:"prepareArguments"`
	Behavior         json.RawMessage            `json:"behavior"`
	ByCall           map[string]json.RawMessage `json:"byCall"`
	// Remote serves the tool as a remote tool (agent.RemoteTool): an
	// activity on a task queue of its own that knows only the remote
	// tool contract (remote.go). pi's reference runner ignores it: to pi
	// it is a tool like any other.
	Remote bool `json:"remote"`
}

// PrepareArguments renames keys, in the order the scenario lists them.
type PrepareArguments struct {
	RenameKeys orderedRenames `json:"renameKeys"`
}

type rename struct{ from, to string }

// orderedRenames keeps a JSON object's key order, as JavaScript's
// Object.entries does; renames may depend on each other.
type orderedRenames []rename

func (o *orderedRenames) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("renameKeys must be an object")
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		var v string
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("renameKeys[%v]: %w", k, err)
		}
		*o = append(*o, rename{from: k.(string), to: v})
	}
	return nil
}

// Behavior is what a test tool does, in this order: updates, steer,
// followUp, abort, delayMs, then throw or the result.
type Behavior struct {
	Updates   []json.RawMessage `json:"updates"`
	Steer     []string          `json:"steer"`
	FollowUp  []string          `json:"followUp"`
	Abort     bool              `json:"abort"`
	DelayMs   float64           `json:"delayMs"`
	Throw     string            `json:"throw"`
	Result    json.RawMessage   `json:"result"`
	EchoArgs  bool              `json:"echoArgs"`
	Details   json.RawMessage   `json:"details"`
	Terminate bool              `json:"terminate"`
}

// Hooks are the scenario's hook rules; the first rule matching a call
// applies.
type Hooks struct {
	BeforeToolCall []BeforeRule `json:"beforeToolCall"`
	AfterToolCall  []AfterRule  `json:"afterToolCall"`
}

// Match selects calls by tool name and tool call id.
type Match struct {
	Tool       *string `json:"tool"`
	ToolCallID *string `json:"toolCallId"`
}

func (m Match) matches(tool, id string) bool {
	return (m.Tool == nil || *m.Tool == tool) && (m.ToolCallID == nil || *m.ToolCallID == id)
}

// BeforeRule blocks a call or throws.
type BeforeRule struct {
	Match
	Block  bool   `json:"block"`
	Reason string `json:"reason"`
	Throw  string `json:"throw"`
}

// AfterRule overrides a call's result or throws.
type AfterRule struct {
	Match
	Override *Override `json:"override"`
	Throw    string    `json:"throw"`
}

// Override lists the result fields an after rule replaces.
type Override struct {
	Content   json.RawMessage `json:"content"`
	Details   json.RawMessage `json:"details"`
	IsError   *bool           `json:"isError"`
	Terminate *bool           `json:"terminate"`
}

// Load reads a scenario file.
func Load(path string) (Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Scenario{}, err
	}
	return Parse(b)
}

// Parse decodes a scenario and checks what the runner relies on.
func Parse(b []byte) (Scenario, error) {
	var s Scenario
	if err := json.Unmarshal(b, &s); err != nil {
		return Scenario{}, fmt.Errorf("scenario: %w", err)
	}
	for i, t := range s.Tools {
		if t.Name == "" {
			return Scenario{}, fmt.Errorf("scenario: tools[%d] has no name", i)
		}
	}
	return s, nil
}

// behaviorFor merges the tool's behavior with its byCall entry for the call,
// key by key, as the reference's object spread does.
func (t ToolSpec) behaviorFor(callID string) (Behavior, error) {
	merged := map[string]json.RawMessage{}
	for _, raw := range []json.RawMessage{t.Behavior, t.ByCall[callID]} {
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return Behavior{}, fmt.Errorf("behavior of %s: %w", t.Name, err)
		}
		maps.Copy(merged, m)
	}
	b, _ := json.Marshal(merged)
	var out Behavior
	if err := json.Unmarshal(b, &out); err != nil {
		return Behavior{}, fmt.Errorf("behavior of %s: %w", t.Name, err)
	}
	return out, nil
}
