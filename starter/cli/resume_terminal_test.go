package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// gatedTest is a test.sh that prints a line, waits for the file go, prints
// another and waits for the file done: what it prints after go cannot have
// been produced before the test made go.
const gatedTest = `#!/bin/sh
echo "before the reattach"
while [ ! -e go ]; do sleep 0.1; done
echo "after the reattach"
while [ ! -e done ]; do sleep 0.1; done
echo "the end"
`

// touch makes an empty file.
func touch(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, nil, 0o644))
}

// `session chat ID` on a session whose tool is running shows the tool's
// output live, as the chat that started it did: a line the tool prints
// after the reattach shows while the tool still runs. Reproduced on the
// old chat: the line showed only with the tool's end (here its timeout,
// two minutes later), since a watch from the session's last event did not
// know that the tool ran.
func TestChatComesBackToARunningTool(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "test.sh"), []byte(gatedTest), 0o755))
	first := run(t, ws, nil, "session", "chat", "-workspace", ws)
	id := sessionID(t, first)
	first.send("run ./test.sh\r")
	first.waitFor("before the reattach")
	first.send("/quit\r")
	require.Equal(t, 0, first.exitCode())

	again := run(t, ws, nil, "session", "chat", id)
	again.waitFor(" messages, running)")
	touch(t, filepath.Join(ws, "go"))
	again.waitFor("│ after the reattach")
	require.True(t, pendingActivity(t, id, "ExecuteToolCall"), "the line showed only once the tool had ended")
	touch(t, filepath.Join(ws, "done"))
	again.waitFor("── stop · ")
	again.send("/quit\r")
	require.Equal(t, 0, again.exitCode())
}

// pendingActivity says whether an activity of that type of workflow id is
// running: a tool call (ExecuteToolCall), a model turn (ModelTurn).
func pendingActivity(t *testing.T, id, activityType string) bool {
	t.Helper()
	desc, err := dialServer(t).DescribeWorkflow(context.Background(), id, "")
	require.NoError(t, err)
	for _, a := range desc.RawResponse.GetPendingActivities() {
		if a.GetActivityType().GetName() == activityType {
			return true
		}
	}
	return false
}

// `session chat ID` on a session whose model answer is streaming shows the
// answer's text live, as the chat that started it did: the half the model
// streams after the reattach shows while the answer still streams.
func TestChatComesBackToAStreamingAnswer(t *testing.T) {
	ws := t.TempDir()
	first := run(t, ws, nil, "session", "chat", "-model", gatedModelRef, "-workspace", ws)
	id := sessionID(t, first)
	first.send("tell me something\r")
	first.waitFor(firstHalf)
	first.send("/quit\r")
	require.Equal(t, 0, first.exitCode())

	again := run(t, ws, nil, "session", "chat", id)
	again.waitFor(" messages, running)")
	again.waitFor(firstHalf) // the text so far, from the live stream
	openGate(t)
	again.waitFor(secondHalf)
	require.True(t, pendingActivity(t, id, "ModelTurn"), "the text showed only once the answer had ended")
	openGate(t)
	again.waitFor("── stop · ")
	again.send("/quit\r")
	require.Equal(t, 0, again.exitCode())
}
