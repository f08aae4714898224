package tools

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/durable-agents/agentloop/agent"
)

// TestDefinitionsMatchPi checks each tool's description and schema against
// pi's, with bash's deliberate difference (a default and a maximum timeout)
// spelled out.
func TestDefinitionsMatchPi(t *testing.T) {
	tools := Builtins(BuiltinOptions{})
	if len(tools) != 7 {
		t.Fatalf("%d builtins", len(tools))
	}
	for _, tool := range tools {
		def := tool.Definition()
		t.Run(def.Name, func(t *testing.T) {
			var pi struct {
				Description string `json:"description"`
				Parameters  any    `json:"parameters"`
			}
			src := piDefinitions[def.Name]
			if def.Name == BashToolName {
				src = strings.Replace(src, "Optionally provide a timeout in seconds.",
					"Optionally provide a timeout in seconds (default: 120, maximum: 1800).", 1)
				src = strings.Replace(src, "(optional, no default timeout)", "(optional, default: 120)", 1)
			}
			must(t, json.Unmarshal([]byte(src), &pi))
			if def.Description != pi.Description {
				t.Errorf("description:\n%s\npi:\n%s", def.Description, pi.Description)
			}
			var got any
			must(t, json.Unmarshal(def.Parameters, &got))
			if !reflect.DeepEqual(got, pi.Parameters) {
				t.Errorf("parameters:\n%s\npi:\n%v", def.Parameters, pi.Parameters)
			}
			if def.Label != def.Name {
				t.Errorf("label %q", def.Label)
			}
		})
	}
}

func TestDurabilityAndExecutionModes(t *testing.T) {
	want := map[string]struct {
		mode        agent.ExecutionMode
		maxAttempts int
	}{
		ReadToolName:  {agent.ExecutionParallel, 0},
		LsToolName:    {agent.ExecutionParallel, 0},
		GrepToolName:  {agent.ExecutionParallel, 0},
		FindToolName:  {agent.ExecutionParallel, 0},
		EditToolName:  {"", 0},
		WriteToolName: {"", 1},
		BashToolName:  {"", 1},
	}
	for _, tool := range Builtins(BuiltinOptions{BashMaxTimeout: time.Minute}) {
		def := tool.Definition()
		w := want[def.Name]
		if def.ExecutionMode != w.mode || def.Durability.MaxAttempts != w.maxAttempts {
			t.Errorf("%s: mode %q attempts %d, want %q %d", def.Name, def.ExecutionMode, def.Durability.MaxAttempts, w.mode, w.maxAttempts)
		}
		if def.Name == BashToolName && def.Durability.Timeout <= time.Minute {
			t.Errorf("bash's activity timeout %v must outlast its longest command", def.Durability.Timeout)
		}
	}
}

func TestRegistryTakesBuiltins(t *testing.T) {
	r := NewRegistry(Builtins(BuiltinOptions{})...)
	want := []string{"bash", "edit", "find", "grep", "ls", "read", "write"}
	if got := r.Names(); !reflect.DeepEqual(got, want) {
		t.Errorf("names %v", got)
	}
}
