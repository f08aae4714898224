package demo

import (
	"embed"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/llm"
)

// ModelID is the demo script's model id under llm.ScriptedProviderName.
const ModelID = "demo"

// Prompt is the demo run's prompt.
const Prompt = "The test in this project fails. Please fix it."

// Steering is the message the demo sends while the first turn runs.
const Steering = "Also make the greeting end with an exclamation mark."

// SystemPrompt is the demo run's system prompt.
const SystemPrompt = "You are a careful coding assistant. Work in the given workspace with the tools you have."

// Tools are the tools the demo run uses.
var Tools = []string{"read", "bash", "edit", "write", "ls", "grep", "find"}

// Input is the demo run's input on a workspace PrepareWorkspace made.
func Input(workspace string) agentapi.AgentLoopInput {
	return agentapi.AgentLoopInput{
		LoopConfig: agent.LoopConfig{
			SystemPrompt: SystemPrompt,
			Model:        agent.ModelRef{Provider: llm.ScriptedProviderName, ID: ModelID},
			Tools:        Tools,
			Workspace:    workspace,
		},
		Prompt: Prompt,
	}
}

//go:embed workspace
var workspace embed.FS

// PrepareWorkspace writes a fresh copy of the sample project into dir.
func PrepareWorkspace(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return fs.WalkDir(workspace, "workspace", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, strings.TrimPrefix(path, "workspace"))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := workspace.ReadFile(path)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(path, ".sh") {
			mode = 0o755
		}
		return os.WriteFile(target, b, mode)
	})
}

// Script is the demo model: it answers what it is asked (reply). Asked to
// fix the test, it looks at the project with parallel reads, runs the
// failing test (an error result), takes a steering message about the
// exclamation mark into account, edits the files in parallel and runs the
// test again.
func Script() llm.Script {
	return llm.Script{ChunkDelay: 40 * time.Millisecond, Reply: reply}
}

// fixScript is the fix-the-test answers, step by step; steered says the
// run was asked (Steering) for an exclamation mark.
func fixScript(steered bool) []llm.ScriptedResponse {
	text := agent.Text
	call := func(id, name string, args map[string]any) agent.Content { return agent.ToolCall(id, name, args) }
	edit := func(path, oldText, newText string) map[string]any {
		return map[string]any{"path": path, "edits": []any{map[string]any{"oldText": oldText, "newText": newText}}}
	}
	look := llm.ScriptedResponse{Content: []agent.Content{
		text("I'll start by looking at the project: listing it and reading both scripts at once."),
		call("call_ls", "ls", map[string]any{"path": "."}),
		call("call_read_greet", "read", map[string]any{"path": "greet.sh"}),
		call("call_read_test", "read", map[string]any{"path": "test.sh"}),
	}}
	rerun := llm.ScriptedResponse{Content: []agent.Content{
		text("Running the test again."),
		call("call_test_2", "bash", map[string]any{"command": "./test.sh"}),
	}}
	if !steered {
		return []llm.ScriptedResponse{look,
			{Content: []agent.Content{
				text("First, let me see how the test fails."),
				call("call_test_1", "bash", map[string]any{"command": "./test.sh"}),
			}},
			{Content: []agent.Content{
				text("greet.sh misspells \"Hello\". I'll fix the typo."),
				call("call_edit_greet", "edit", edit("greet.sh", `echo "Helo, $name"`, `echo "Hello, $name"`)),
			}},
			rerun,
			{Content: []agent.Content{text("The test passes. greet.sh misspelled \"Hello\" as \"Helo\"; I fixed the typo.")}},
		}
	}
	return []llm.ScriptedResponse{look,
		{Content: []agent.Content{
			text("Noted: the greeting should end with an exclamation mark. First, let me see how the test fails."),
			call("call_test_1", "bash", map[string]any{"command": "./test.sh"}),
		}},
		{Content: []agent.Content{
			text("greet.sh misspells \"Hello\". I'll fix that and add the exclamation mark, and update the test's expectation to match."),
			call("call_edit_greet", "edit", edit("greet.sh", `echo "Helo, $name"`, `echo "Hello, $name!"`)),
			call("call_edit_test", "edit", edit("test.sh", `want='Hello, Temporal'`, `want='Hello, Temporal!'`)),
		}},
		rerun,
		{Content: []agent.Content{
			text("The test passes. greet.sh now prints \"Hello, <name>!\": I fixed the typo and, as you asked, ended the greeting with an exclamation mark; test.sh expects the new text."),
		}},
	}
}
