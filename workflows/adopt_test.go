package workflows

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
)

// Stubs of other scopes, in content and in details, are found once each
// and pointed at the copies; stubs of the run's own scope, and stubs that
// were not copied, stay as they are.
func TestAdoptStubs(t *testing.T) {
	other := agent.BlobRef{SHA256: "aa", Size: 3000, Scope: "source"}
	details := agent.BlobRef{SHA256: "bb", Size: 4000, Scope: "source"}
	mine := agent.BlobRef{SHA256: "cc", Size: 5000, Scope: "me"}
	late := agent.BlobRef{SHA256: "dd", Size: 6000, Scope: "elsewhere"}
	ms := []agent.Message{
		{Role: agent.RoleToolResult, Content: []agent.Content{agent.StubContent(agent.ContentText, other), agent.Text("small")},
			Details: agent.StubDetails(details)},
		{Role: agent.RoleUser, Content: []agent.Content{agent.StubContent(agent.ContentText, mine), agent.StubContent(agent.ContentText, other)}},
	}
	refs := foreignRefs("me", ms)
	require.Equal(t, []agent.BlobRef{other, details}, refs)

	ms = append(ms, agent.Message{Role: agent.RoleUser, Content: []agent.Content{agent.StubContent(agent.ContentText, late)}})
	out := ownStubs("me", refs, ms)
	require.Equal(t, "me", out[0].Content[0].Blob.Scope)
	require.Equal(t, "small", out[0].Content[1].Text)
	d, ok := agent.DetailsBlob(out[0].Details)
	require.True(t, ok)
	require.Equal(t, agent.BlobRef{SHA256: "bb", Size: 4000, Scope: "me"}, d)
	require.Equal(t, mine, *out[1].Content[0].Blob)
	require.Equal(t, "me", out[1].Content[1].Blob.Scope)
	require.Equal(t, late, *out[2].Content[0].Blob, "not copied: left as it is")
	require.Equal(t, "source", ms[0].Content[0].Blob.Scope, "the input is not changed in place")
	require.Empty(t, foreignRefs("me", out[:2]))
}
