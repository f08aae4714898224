package cli_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/demo"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/store"
)

// startedSession is the line a new session's start prints.
var startedSession = regexp.MustCompile(`Session (session-[0-9a-f]+) started`)

// demoWorkspace is the demo's sample project: greet.sh misspells its
// greeting and test.sh fails on it.
func demoWorkspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	require.NoError(t, demo.PrepareWorkspace(ws))
	return ws
}

// dialServer connects to the tests' dev server.
func dialServer(t *testing.T) client.Client {
	t.Helper()
	setup(t)
	c, err := client.Dial(client.Options{HostPort: hostPort, Logger: testenv.Quiet()})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// screenAfter is the screen after the first occurrence of mark.
func screenAfter(screen, mark string) string {
	_, rest, _ := strings.Cut(screen, mark)
	return rest
}

// An edit waiting for approval shows the unified diff it would make, in
// color, and not its arguments as JSON; "always" answers the sibling edit
// too, whose prompt never shows, and the next line is a prompt again.
func TestApprovalShowsTheDiffAndAlwaysAnswersItsSiblings(t *testing.T) {
	ws := demoWorkspace(t)
	chat := run(t, ws, []string{"NO_COLOR="}, "session", "chat", "-approve-tools", "edit", "-workspace", ".")
	chat.waitFor("Type a prompt")
	chat.send("fix the failing test and make the greeting end with an exclamation mark\r")
	chat.waitFor("Allow edit (call_edit_greet)?")
	chat.waitFor("[y]es / [n]o / [a]lways edit")
	asked := screenAfter(chat.Screen(), "Allow edit (call_edit_greet)?")
	require.Contains(t, asked, "greet.sh\n")
	require.Contains(t, asked, `-4 echo "Helo, $name"`)
	require.Contains(t, asked, `+4 echo "Hello, $name!"`)
	require.Contains(t, asked, ` 3 name="${1:-world}"`, "context lines")
	require.Contains(t, chat.Raw(), "\x1b[32m+4 echo", "added lines in green")
	require.NotContains(t, chat.Screen(), "oldText", "the arguments are not shown as JSON")

	chat.send("a\r")
	chat.waitFor("edit allowed for the rest of the session (0 other call(s) still wait)")
	chat.waitFor("ended the greeting with an exclamation mark")
	require.NotContains(t, chat.Screen(), "Allow edit (call_edit_test)?", "always answered the sibling: no stale prompt")
	require.NotContains(t, chat.Screen(), "approve:", "no answer went to a call that no longer waits")

	// The next line is a prompt, not an answer to an approval.
	chat.send("read test.sh\r")
	chat.waitFor("want='Hello, Temporal!'")
	chat.send("/quit\r")
	require.Equal(t, 0, chat.exitCode())
}

// `session chat ID` comes back to a session: the transcript (tool outputs
// collapsed), the approval that waits asked again (with its diff), the
// answer going to the approval and not to the model, the rest of the run
// streaming, and a long answer shown whole.
func TestChatComesBackToASession(t *testing.T) {
	ws := demoWorkspace(t)
	first := run(t, ws, nil, "session", "chat", "-approve-tools", "edit", "-workspace", ".")
	first.waitFor("Type a prompt")
	first.send("fix the failing test\r")
	first.waitFor("Allow edit (call_edit_greet)?")
	id := startedSession.FindStringSubmatch(first.Screen())[1]
	first.send("/quit\r")
	require.Equal(t, 0, first.exitCode())

	again := run(t, ws, nil, "session", "chat", id)
	again.waitFor("Allow edit (call_edit_greet)?")
	replay := again.Screen()
	require.Contains(t, replay, "› fix the failing test")
	require.Contains(t, replay, "assistant ▸ I'll start by looking at the project: listing it and reading both scripts at once.")
	require.Contains(t, replay, "✓ read #!/usr/bin/env bash\n      # Prints a greeting for the name given as the first argument. … (2 more lines)",
		"a tool output collapsed to its first lines")
	require.Contains(t, replay, "⚙ edit greet.sh (1 replacement(s))")
	require.Contains(t, replay, "✗ bash FAIL: greet.sh printed 'Helo, Temporal', want 'Hello, Temporal'")
	require.Contains(t, screenAfter(replay, "Allow edit (call_edit_greet)?"), `+4 echo "Hello, $name"`)

	again.send("y\r")
	again.waitFor("The test passes. greet.sh misspelled \"Hello\" as \"Helo\"; I fixed the typo.")
	// A second prompt whose answer is longer than the 200 characters the
	// old chat cut answers to.
	again.send("read test.sh\r")
	again.waitFor(`echo "PASS: greet.sh printed '$got'"`)
	answer := screenAfter(again.Screen(), "read returned:")
	require.Greater(t, len(answer), 250)
	require.NotContains(t, answer, "…")
	again.send("/quit\r")
	require.Equal(t, 0, again.exitCode())

	// The y answered the approval: it is not in the transcript.
	st, err := store.Open(storeDir, store.Options{})
	require.NoError(t, err)
	ms, err := agentclient.FullTranscript(context.Background(), dialServer(t), st, id)
	require.NoError(t, err)
	var prompts []string
	for _, m := range ms {
		if m.Role == agent.RoleUser {
			prompts = append(prompts, agent.TextOf(m.Content))
		}
	}
	require.Equal(t, []string{"fix the failing test", "read test.sh"}, prompts)
}

// `session list` shows a session's title (its first prompt), status,
// model, turns, cost and last activity; the Web UI gets the title as the
// static summary and the idle status in the current details.
func TestSessionList(t *testing.T) {
	ws := demoWorkspace(t)
	start := run(t, ws, nil, "session", "start", "-workspace", ".", "list the files")
	start.waitFor("ls returned:")
	require.Equal(t, 0, start.exitCode())
	id := startedSession.FindStringSubmatch(start.Screen())[1]

	// The list reads visibility, which the server updates after the run's
	// upserts: ask until the session shows as idle.
	row := regexp.MustCompile(regexp.QuoteMeta(id) + `\s+list the files\s+idle\s+scripted/demo\s+2\s+\$0\.0000\s+(just now|\d+ min ago)`)
	deadline := time.Now().Add(appear)
	for {
		list := run(t, ws, nil, "session", "list")
		require.Equal(t, 0, list.exitCode())
		require.Contains(t, list.Screen(), "ID")
		require.Contains(t, list.Screen(), "LAST ACTIVITY")
		if row.MatchString(list.Screen()) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("session list did not show %s as idle:\n%s", id, list.Screen())
		}
		time.Sleep(time.Second)
	}

	c := dialServer(t)
	ctx := context.Background()
	desc, err := c.DescribeWorkflow(ctx, id, "")
	require.NoError(t, err)
	var summary string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(desc.RawResponse.GetExecutionConfig().GetUserMetadata().GetSummary(), &summary))
	require.Equal(t, "list the files", summary)
	resp, err := c.QueryWorkflow(ctx, id, "", "__temporal_workflow_metadata")
	require.NoError(t, err)
	var meta sdkpb.WorkflowMetadata
	require.NoError(t, resp.Get(&meta))
	require.True(t, strings.HasPrefix(meta.GetCurrentDetails(), "**idle** · turn 2 · scripted/demo"), meta.GetCurrentDetails())
	require.Contains(t, meta.GetCurrentDetails(), "list the files")
}
