package cli_test

import (
	"regexp"
	"strings"
	"testing"
)

var sessionLine = regexp.MustCompile(`Session (session-[0-9a-f]+) \(`)

// sessionID reads the id of the session a chat started.
func sessionID(t *testing.T, tm *term) string {
	t.Helper()
	// The chat's own line, not the "no worker polls" one a cold worker
	// may print first.
	tm.waitFor(" messages, ")
	m := sessionLine.FindStringSubmatch(tm.Screen())
	if m == nil {
		t.Fatalf("no session id on the screen")
	}
	return m[1]
}

// Every command typed in the chat is its own Update: three /thinking
// setters in a row all apply (the last wins), and after a /model the
// session refuses, the next setter applies rather than repeating the
// refusal. Reproduced on the old chat, which sent every setter with the
// process's one Update ID: only the first applied, silently.
func TestChatEachCommandIsItsOwnUpdate(t *testing.T) {
	ws := workspace(t, 1, "0")
	tm := run(t, ws, nil, "session", "chat", "-workspace", ws)
	id := sessionID(t, tm)
	tm.send("/thinking high\r")
	tm.send("/thinking low\r")
	tm.send("/thinking medium\r")
	tm.send("/model scripted/no-such-model\r")
	tm.waitFor("is not registered")
	tm.send("/thinking minimal\r")
	tm.send("/quit\r")
	if code := tm.exitCode(); code != 0 {
		t.Fatalf("chat exit code %d", code)
	}
	screen := tm.Screen()
	if strings.Count(screen, "is not registered") != 1 || strings.Contains(screen, "-update-id") {
		t.Fatalf("want the /model refusal once and no retry hint:\n%s", screen)
	}
	out, code := runPiped(t, ws, nil, "state", id)
	if code != 0 || !strings.Contains(out, `"thinkingLevel": "minimal"`) {
		t.Fatalf("want thinking level minimal after the last setter (exit %d):\n%s", code, out)
	}
	if strings.Contains(out, "no-such-model") {
		t.Fatalf("the refused model must not be set:\n%s", out)
	}
}

// Slash commands the chat does not know are refused with the list rather
// than sent to the model; /steer with nothing running says so; /state is a
// short summary and /state -json the whole state. Reproduced on the old
// chat: /foo went to the model as a prompt, /steer printed nothing and
// /state printed the raw JSON.
func TestChatSlashCommands(t *testing.T) {
	ws := workspace(t, 1, "0")
	tm := run(t, ws, nil, "session", "chat", "-workspace", ws)
	sessionID(t, tm)
	tm.send("/foo bar\r")
	tm.waitFor(`unknown command /foo`)
	tm.waitFor("/steer")
	tm.send("/steer hurry\r")
	tm.waitFor("nothing is running")
	tm.send("/state\r")
	tm.waitFor("idle")
	tm.waitFor("0 messages")
	tm.send("/state -json\r")
	tm.waitFor(`"thinkingLevel"`)
	tm.send("/quit\r")
	tm.exitCode()
	screen := tm.Screen()
	if strings.Contains(screen, "user: /foo") || strings.Contains(screen, "agent start") {
		t.Fatalf("/foo went to the model:\n%s", screen)
	}
	if i := strings.Index(screen, "/state\n"); i >= 0 && strings.Contains(screen[i:strings.Index(screen, "/state -json")], `"pendingToolCalls"`) {
		t.Fatalf("/state printed the raw state:\n%s", screen)
	}
}

var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// Ctrl-C while a run works aborts it, as in pi and Claude Code, and the
// chat goes on: the run's status line says aborted, with its tokens and
// cost; Esc then Enter aborts too; Ctrl-C while idle leaves the chat,
// saying how to come back. With
// NO_COLOR the terminal gets no colors, but still the prompt marker.
// Reproduced on the old chat: Ctrl-C ended the chat with "context
// canceled", exit 1, and the run went on.
func TestChatCtrlCAbortsTheRun(t *testing.T) {
	ws := workspace(t, 300, "0.2")
	tm := run(t, ws, []string{"NO_COLOR=1"}, "session", "chat", "-workspace", ws)
	id := sessionID(t, tm)
	tm.send("run ./test.sh\r")
	tm.waitFor("line 3 of the test")
	tm.send("\x03")
	tm.waitFor("Aborting the run")
	tm.waitFor("── aborted")
	tm.waitForAfter("── aborted", "tokens in")
	tm.send("/state\r")
	tm.waitForAfter("── aborted", "idle")
	// Esc, Enter aborts too.
	bashCalls := strings.Count(tm.Screen(), "⚙ bash")
	tm.send("run ./test.sh\r")
	tm.waitCount("⚙ bash", bashCalls+1) // the 300 lines take a minute
	tm.send("\x1b\r")
	tm.waitCount("── aborted", 2)
	tm.send("\x03")
	tm.waitFor("starter session chat " + id)
	if code := tm.exitCode(); code != 0 {
		t.Fatalf("leaving an idle chat: exit code %d", code)
	}
	if sgr.MatchString(tm.Raw()) {
		t.Fatalf("colors despite NO_COLOR: %q", sgr.FindString(tm.Raw()))
	}
	if !strings.Contains(tm.Screen(), "› ") {
		t.Fatal("no prompt marker on the terminal")
	}
}

// A chat run ends with a status line: how it stopped, its model calls,
// tokens and cost; on a terminal the chat colors its marks and shows a
// prompt marker. Reproduced on the old chat: no status line, no colors,
// no marker.
func TestChatStatusLineAndColors(t *testing.T) {
	ws := workspace(t, 2, "0")
	tm := run(t, ws, nil, "session", "chat", "-workspace", ws)
	sessionID(t, tm)
	tm.send("run ./test.sh\r")
	tm.waitFor("── stop · ")
	tm.waitForAfter("── stop · ", "model calls · tokens in ")
	tm.send("/quit\r")
	tm.exitCode()
	if !sgr.MatchString(tm.Raw()) || !strings.Contains(tm.Screen(), "› ") {
		t.Fatalf("want colors and a prompt marker on a terminal")
	}
}
