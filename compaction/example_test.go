package compaction_test

import (
	"fmt"
	"strings"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/compaction"
)

// A session of two prompts compacted so that about 4 tokens stay: the first
// prompt and its answer are summarized, the second is kept.
func Example() {
	h := compaction.History{Messages: []agent.Message{
		agent.UserText("Read main.go and explain it.", 1),
		{Role: agent.RoleAssistant, Content: []agent.Content{
			agent.ToolCall("c1", "read", map[string]any{"path": "main.go"})}, StopReason: agent.StopReasonToolUse, Timestamp: 2},
		{Role: agent.RoleToolResult, ToolCallID: "c1", ToolName: "read", Content: []agent.Content{agent.Text("package main")}, Timestamp: 3},
		{Role: agent.RoleAssistant, Content: []agent.Content{agent.Text("It is an empty main package.")}, StopReason: agent.StopReasonStop, Timestamp: 4},
		agent.UserText("Now add a test.", 5),
	}}
	settings := compaction.DefaultSettings
	settings.KeepRecentTokens = 4

	p, err := compaction.PrepareCompaction(h, settings)
	if err != nil {
		panic(err)
	}
	reqs := compaction.BuildRequests(p, compaction.RequestOptions{Timestamp: 6})
	prompt := reqs.History.Request.Messages[0].Content[0].Text
	conversation, _, _ := strings.Cut(prompt, "</conversation>")
	fmt.Print(conversation)

	// The caller sends reqs.History.Request to the model; here is its answer.
	answer := agent.Message{Role: agent.RoleAssistant, Content: []agent.Content{agent.Text("## Goal\nExplain main.go.")}}
	text, err := compaction.SummaryText(compaction.KindHistory, answer)
	if err != nil {
		panic(err)
	}
	a := compaction.Apply(h, p, compaction.Summaries{History: text}, 7)
	for _, m := range a.Context {
		fmt.Printf("%s: %q\n", m.Role, agent.TextOf(m.Content))
	}
	// Output:
	// <conversation>
	// [User]: Read main.go and explain it.
	//
	// [Assistant tool calls]: read(path="main.go")
	//
	// [Tool result]: package main
	//
	// [Assistant]: It is an empty main package.
	// user: "The conversation history before this point was compacted into the following summary:\n\n<summary>\n## Goal\nExplain main.go.\n\n<read-files>\nmain.go\n</read-files>\n</summary>"
	// user: "Now add a test."
}
