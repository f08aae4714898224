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

// Every built-in declares its retry class (tools/README.md's table): a
// retry is safe for the read-only tools and for write, which overwrites; edit
// and bash run once. All of them touch the workspace.
func TestDurabilityAndExecutionModes(t *testing.T) {
	want := map[string]struct {
		mode  agent.ExecutionMode
		retry RetryClass
	}{
		ReadToolName:  {agent.ExecutionParallel, RetrySafe},
		LsToolName:    {agent.ExecutionParallel, RetrySafe},
		GrepToolName:  {agent.ExecutionParallel, RetrySafe},
		FindToolName:  {agent.ExecutionParallel, RetrySafe},
		EditToolName:  {"", RetryOnce},
		WriteToolName: {"", RetrySafe},
		BashToolName:  {"", RetryOnce},
	}
	for _, tool := range Builtins(BuiltinOptions{BashMaxTimeout: time.Minute}) {
		def := tool.Definition()
		w := want[def.Name]
		if def.ExecutionMode != w.mode || def.Durability.Retry != w.retry {
			t.Errorf("%s: mode %q retry %q, want %q %q", def.Name, def.ExecutionMode, def.Durability.Retry, w.mode, w.retry)
		}
		if got, single := def.Durability.SingleAttempt(), w.retry == RetryOnce; got != single {
			t.Errorf("%s: single attempt %v, want %v", def.Name, got, single)
		}
		if !def.Workspace {
			t.Errorf("%s does not say it touches the workspace", def.Name)
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
