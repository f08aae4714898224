package agentclient

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/store"
)

// What a client sends keeps its small content inline and sends a stub for
// each large block, stored under the workflow id; the stub reads back as
// the block, and a prompt's large text becomes its last message, where the
// workflow would put it.
func TestStoreContent(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(t.TempDir(), store.Options{})
	require.NoError(t, err)
	big := strings.Repeat("large ", 20_000)

	out, err := StoreContent(ctx, st, "wf-1", agentapi.PromptRequest{Text: big, Messages: []agent.Message{agent.UserText("first", 0)}})
	require.NoError(t, err)
	p := out.(agentapi.PromptRequest)
	require.Empty(t, p.Text)
	require.Len(t, p.Messages, 2)
	require.Equal(t, "first", agent.TextOf(p.Messages[0].Content), "small content stays inline")
	require.True(t, p.Messages[1].Content[0].IsStub())
	require.Equal(t, "wf-1", p.Messages[1].Content[0].Blob.Scope)
	back, err := store.ResolveMessage(ctx, st, p.Messages[1])
	require.NoError(t, err)
	require.Equal(t, big, agent.TextOf(back.Content))

	out, err = StoreContent(ctx, st, "wf-1", agentapi.PromptRequest{Text: "small"})
	require.NoError(t, err)
	require.Equal(t, agentapi.PromptRequest{Text: "small"}, out, "a small prompt is sent as it is")

	out, err = StoreContent(ctx, st, "wf-2", agentapi.AgentLoopInput{Prompt: big, Steering: []agent.Message{agent.UserText(big, 0)}})
	require.NoError(t, err)
	in := out.(agentapi.AgentLoopInput)
	require.Empty(t, in.Prompt)
	require.True(t, in.Prompts[0].Content[0].IsStub())
	require.True(t, in.Steering[0].Content[0].IsStub())

	out, err = StoreContent(ctx, st, "wf-3", agent.UserText(big, 0))
	require.NoError(t, err)
	require.True(t, out.(agent.Message).Content[0].IsStub())

	out, err = StoreContent(ctx, nil, "wf-3", agent.UserText(big, 0))
	require.NoError(t, err)
	require.Equal(t, big, agent.TextOf(out.(agent.Message).Content), "no store: sent inline, for the workflow to store")
}
