package termsession

import (
	"context"
	"regexp"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/demo"
	"github.com/durable-agents/agentloop/internal/testenv"
	"github.com/durable-agents/agentloop/store"
)

var sessionID = regexp.MustCompile(`Session (session-[0-9a-f]+) started`)

func workspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	require.NoError(t, demo.PrepareWorkspace(ws))
	return ws
}

func dial(t *testing.T) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: hostPort, Logger: testenv.Quiet()})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// An edit waiting for approval shows the unified diff it would make, in
// color, and not its arguments as JSON; "always" answers the sibling edit
// too, whose prompt never shows, and the next line is a prompt again.
func TestApprovalShowsTheDiffAndAlwaysAnswersItsSiblings(t *testing.T) {
	ws := workspace(t)
	chat := starter(t, ws, "session", "chat", "-approve-tools", "edit", "-workspace", ".")
	chat.waitFor("Type a prompt")
	chat.typeLine("fix the failing test and make the greeting end with an exclamation mark")
	chat.waitFor("Allow edit (call_edit_greet)?")
	chat.waitFor("[y]es / [n]o / [a]lways edit")
	asked := after(chat.screen(), "Allow edit (call_edit_greet)?")
	require.Contains(t, asked, "greet.sh\n")
	require.Contains(t, asked, `-4 echo "Helo, $name"`)
	require.Contains(t, asked, `+4 echo "Hello, $name!"`)
	require.Contains(t, asked, ` 3 name="${1:-world}"`, "context lines")
	require.Contains(t, chat.rawScreen(), "\x1b[32m+4 echo", "added lines in green")
	require.NotContains(t, chat.screen(), "oldText", "the arguments are not shown as JSON")

	chat.typeLine("a")
	chat.waitFor("edit allowed for the rest of the session (0 other call(s) still wait)")
	chat.waitFor("ended the greeting with an exclamation mark")
	require.NotContains(t, chat.screen(), "Allow edit (call_edit_test)?", "always answered the sibling: no stale prompt")
	require.NotContains(t, chat.screen(), "approve:", "no answer went to a call that no longer waits")

	// The next line is a prompt, not an answer to an approval.
	chat.typeLine("read test.sh")
	chat.waitFor("want='Hello, Temporal!'")
	chat.typeLine("/quit")
	require.Equal(t, 0, chat.exit())
}

// `session chat ID` comes back to a session: the transcript (tool outputs
// collapsed), the approval that waits asked again (with its diff), the
// answer going to the approval and not to the model, the rest of the run
// streaming, and a long answer shown whole.
func TestChatComesBackToASession(t *testing.T) {
	ws := workspace(t)
	first := starter(t, ws, "session", "chat", "-approve-tools", "edit", "-workspace", ".")
	first.waitFor("Type a prompt")
	first.typeLine("fix the failing test")
	first.waitFor("Allow edit (call_edit_greet)?")
	id := sessionID.FindStringSubmatch(first.screen())[1]
	first.typeLine("/quit")
	require.Equal(t, 0, first.exit())

	again := starter(t, ws, "session", "chat", id)
	again.waitFor("Allow edit (call_edit_greet)?")
	replay := again.screen()
	require.Contains(t, replay, "› fix the failing test")
	require.Contains(t, replay, "assistant ▸ I'll start by looking at the project: listing it and reading both scripts at once.")
	require.Contains(t, replay, "✓ read #!/usr/bin/env bash\n      # Prints a greeting for the name given as the first argument. … (2 more lines)",
		"a tool output collapsed to its first lines")
	require.Contains(t, replay, "⚙ edit greet.sh (1 replacement(s))")
	require.Contains(t, replay, "✗ bash FAIL: greet.sh printed 'Helo, Temporal', want 'Hello, Temporal'")
	require.Contains(t, after(replay, "Allow edit (call_edit_greet)?"), `+4 echo "Hello, $name"`)

	again.typeLine("y")
	again.waitFor("The test passes. greet.sh misspelled \"Hello\" as \"Helo\"; I fixed the typo.")
	// A second prompt whose answer is longer than the 200 characters the
	// old chat cut answers to.
	again.typeLine("read test.sh")
	again.waitFor(`echo "PASS: greet.sh printed '$got'"`)
	answer := after(again.screen(), "read returned:")
	require.Greater(t, len(answer), 250)
	require.NotContains(t, answer, "…")
	again.typeLine("/quit")
	require.Equal(t, 0, again.exit())

	// The y answered the approval: it is not in the transcript.
	st, err := store.Open(storeDir, store.Options{})
	require.NoError(t, err)
	ms, err := agentclient.FullTranscript(context.Background(), dial(t), st, id)
	require.NoError(t, err)
	var prompts []string
	for _, m := range ms {
		if m.Role == agent.RoleUser {
			prompts = append(prompts, agent.TextOf(m.Content))
		}
	}
	require.Equal(t, []string{"fix the failing test", "read test.sh"}, prompts)
}
