package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/store"
)

// The codec server's expander turns the stubs in a payload (here a tool
// result message, as an activity's output holds it) back into the content,
// and leaves what it cannot read as it is.
func TestExpanderShowsStoredContent(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{})
	require.NoError(t, err)
	ctx := context.Background()
	big := strings.Repeat("a line of tool output\n", 400)
	details := json.RawMessage(`{"truncation":{"totalLines":400},"pad":"` + strings.Repeat("x", 3000) + `"}`)
	msg, err := store.OffloadMessage(ctx, st, "wf", agent.ToolResultMessage(agent.ToolCall("c1", "bash", nil),
		agent.ToolResult{Content: []agent.Content{agent.Text(big)}, Details: details}, false, 1))
	require.NoError(t, err)
	require.NotNil(t, msg.Content[0].Blob)
	gone := agent.StubContent(agent.ContentText, agent.BlobRef{SHA256: strings.Repeat("0", 64), Size: 10, Scope: "wf"})
	msg.Content = append(msg.Content, gone)

	p, err := converter.GetDefaultDataConverter().ToPayload(map[string]any{"message": msg, "count": 12345678901234567})
	require.NoError(t, err)
	out, err := store.Expander{Blobs: st}.Decode([]*commonpb.Payload{p})
	require.NoError(t, err)
	var got struct {
		Message agent.Message `json:"message"`
		Count   json.Number   `json:"count"`
	}
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(out[0], &got))
	require.Equal(t, big, got.Message.Content[0].Text)
	require.Nil(t, got.Message.Content[0].Blob)
	require.JSONEq(t, string(details), string(got.Message.Details))
	require.NotNil(t, got.Message.Content[1].Blob, "a stub that cannot be read stays a stub")
	require.Equal(t, "12345678901234567", got.Count.String(), "numbers keep their digits")
}
