package cli_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fixAndExclaim is the demo model's prompt that makes two edits at once.
const fixAndExclaim = "fix the failing test and make the greeting end with an exclamation mark"

// While an approval waits, the chat says so once, on a line of its own,
// for each call in turn: the one it asks, and how many wait. Reproduced on
// the old chat: once the prompt had scrolled by, nothing said the run
// waited for an answer.
func TestChatSaysAnApprovalWaits(t *testing.T) {
	ws := demoWorkspace(t)
	chat := run(t, ws, nil, "session", "chat", "-approve-tools", "edit", "-workspace", ".")
	chat.waitFor("Type a prompt")
	chat.send(fixAndExclaim + "\r")
	chat.waitFor("Allow edit (call_edit_greet)?")
	first := "… waiting for your approval of edit call_edit_greet (1 of 2 waiting): y/n/always"
	chat.waitFor(first)
	chat.send("y\r")
	chat.waitFor("Allow edit (call_edit_test)?")
	second := "… waiting for your approval of edit call_edit_test (1 of 1 waiting): y/n/always"
	chat.waitFor(second)
	chat.send("y\r")
	chat.waitFor("── stop · ")
	chat.send("/quit\r")
	require.Equal(t, 0, chat.exitCode())
	screen := chat.Screen()
	require.Equal(t, 1, strings.Count(screen, first), "said once")
	require.Equal(t, 1, strings.Count(screen, second), "said once")
	require.Contains(t, screen, "\n"+first+"\n", "a line of its own, not after the question")
}

// A command that follows a session's run but cannot answer its approvals
// (`session prompt`, `watch`) says once for each waiting call how to
// answer it. Reproduced on the old starter: `watch` showed the request
// event and then nothing, however long the call waited.
func TestFollowersSayHowToAnswerAnApproval(t *testing.T) {
	ws := demoWorkspace(t)
	out, code := runPiped(t, ws, nil, "session", "start", "-approve-tools", "edit", "-workspace", ".")
	require.Equal(t, 0, code, out)
	id := strings.TrimSpace(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:])

	prompt := run(t, ws, nil, "session", "prompt", id, fixAndExclaim)
	greet := "… edit call_edit_greet waits for approval: answer with `starter approve " + id + " call_edit_greet allow|deny|always` or in `starter session chat " + id + "`"
	editTest := "… edit call_edit_test waits for approval: answer with `starter approve " + id + " call_edit_test allow|deny|always` or in `starter session chat " + id + "`"
	prompt.waitFor(greet)
	prompt.waitFor(editTest)
	watch := run(t, ws, nil, "watch", id)
	watch.waitFor(greet)
	watch.waitFor(editTest)

	for _, call := range []string{"call_edit_greet", "call_edit_test"} {
		out, code := runPiped(t, ws, nil, "approve", id, call, "allow")
		require.Equal(t, 0, code, out)
	}
	prompt.waitFor("── stop · ")
	require.Equal(t, 0, prompt.exitCode())
	for _, tm := range []*term{prompt, watch} {
		require.Equal(t, 1, strings.Count(tm.Screen(), greet), "said once")
		require.Equal(t, 1, strings.Count(tm.Screen(), editTest), "said once")
	}
}
