package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/starter/cli"
)

var runLine = regexp.MustCompile(`Run (agent-[0-9a-f]+) started`)

// Ctrl-C while `starter run` follows a run aborts the run; the starter
// exits with the aborted code. Reproduced on the old starter: "starter:
// context canceled", exit 1, and the run went on.
func TestRunCtrlCAbortsTheRun(t *testing.T) {
	ws := workspace(t, 300, "0.2")
	tm := run(t, ws, nil, "run", "-workspace", ws, "run ./test.sh")
	tm.waitFor("line 3 of the test")
	tm.send("\x03")
	tm.waitFor("Aborting agent-")
	tm.waitFor("Run ended: stopReason aborted")
	if code := tm.exitCode(); code != cli.ExitAborted {
		t.Fatalf("exit code %d, want %d", code, cli.ExitAborted)
	}
}

// With no worker on the run's task queue, the starter says so; Ctrl-C
// sends the abort, which waits for a worker too, and a second Ctrl-C
// detaches, printing how to follow and stop the run; `starter abort` then
// says it waits for a worker. Reproduced on the old starter: one Ctrl-C
// ended it with "context canceled", exit 1, and no word of how to come
// back; the abort waited in silence.
func TestRunCtrlCTwiceDetaches(t *testing.T) {
	ws := workspace(t, 1, "0")
	queue := "nobody-" + testenv.Suffix()
	tm := run(t, ws, nil, "run", "-task-queue", queue, "-workspace", ws, "run ./test.sh")
	tm.waitFor("no worker polls " + queue)
	m := runLine.FindStringSubmatch(tm.Screen())
	if m == nil {
		t.Fatal("no run id on the screen")
	}
	tm.send("\x03")
	tm.waitFor("Ctrl-C again to detach")
	tm.send("\x03")
	tm.waitFor("starter watch " + m[1])
	tm.waitFor("starter abort " + m[1])
	if code := tm.exitCode(); code != cli.ExitDetached {
		t.Fatalf("exit code %d, want %d", code, cli.ExitDetached)
	}

	// `starter abort` waits for a worker too, and says so rather than
	// hang in silence; Ctrl-C leaves it.
	tm = run(t, ws, nil, "abort", m[1])
	tm.waitFor("no worker polls " + queue + ": " + m[1] + " waits until one does")
	tm.send("\x03")
	if code := tm.exitCode(); code != cli.ExitDetached {
		t.Fatalf("abort: exit code %d, want %d", code, cli.ExitDetached)
	}
}

// A run that stops with an error, and one stopped by its budget, end
// the starter with non-zero codes; input the session refuses ends it with
// the refused code, without the hint to resend the Update (the session
// would refuse it again). Reproduced on the old starter: exit 0 for the
// first two (the old demo model's "Error: No more faux responses queued",
// which the demo model that answers what it is asked never says: an
// unknown model now, the issue's own row; "stopReason budget"), 1 and the
// resend hint for the third.
func TestRunExitCodes(t *testing.T) {
	ws := workspace(t, 1, "0")
	// A model the worker does not have: the run ends in error, as a
	// provider's refusal ends one.
	out, code := runPiped(t, ws, nil, "run", "-model", "scripted/nope", "-workspace", ws, "hello")
	if code != cli.ExitError || !strings.Contains(out, "nope") {
		t.Fatalf("a run that stops with an error: exit code %d, want %d:\n%s", code, cli.ExitError, out)
	}
	out, code = runPiped(t, ws, nil, "run", "-budget", "maxTurns=1", "-workspace", ws, "run ./test.sh")
	if code != cli.ExitBudget || !strings.Contains(out, "stopReason budget") {
		t.Fatalf("budget: exit code %d, want %d:\n%s", code, cli.ExitBudget, out)
	}
	out, code = runPiped(t, ws, nil, "session", "start", "-workspace", ws)
	if code != 0 {
		t.Fatalf("session start: exit %d:\n%s", code, out)
	}
	id := strings.TrimSpace(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:])
	out, code = runPiped(t, ws, nil, "session", "set", id, "thinking", "enormous")
	if code != cli.ExitRefused || !strings.Contains(out, `level "enormous"`) || strings.Contains(out, "-update-id") {
		t.Fatalf("refused setting: exit code %d, want %d, the refusal and no resend hint:\n%s", code, cli.ExitRefused, out)
	}
	out, code = runPiped(t, ws, nil, "session", "set", id, "remote-tools", `[{"name":"read","taskQeue":"q"}]`)
	if code != cli.ExitRefused || !strings.Contains(out, `unknown field "taskQeue"`) {
		t.Fatalf("refused remote tools: exit code %d, want %d and the unknown field:\n%s", code, cli.ExitRefused, out)
	}
	tools := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(tools, []byte(`[{"name":"notes","taskQueue":"notes-tools","activityType":"Notes","replay":"never"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code = runPiped(t, ws, nil, "session", "set", id, "remote-tools", tools); code != 0 {
		t.Fatalf("remote tools from a file: exit code %d:\n%s", code, out)
	}
	out, code = runPiped(t, ws, nil, "session", "set", id, "hooks", `{"beforeToolCal": ["audit"]}`)
	if code != cli.ExitRefused || !strings.Contains(out, `unknown field "beforeToolCal"`) {
		t.Fatalf("refused hooks: exit code %d, want %d and the unknown field:\n%s", code, cli.ExitRefused, out)
	}
	hooks := filepath.Join(t.TempDir(), "hooks.json")
	if err := os.WriteFile(hooks, []byte(`{"beforeToolCall": [{"activity": {"taskQueue": "team-hooks", "activityType": "CheckCall"}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code = runPiped(t, ws, nil, "session", "set", id, "hooks", hooks); code != 0 {
		t.Fatalf("hooks from a file: exit code %d:\n%s", code, out)
	}
}

// A running tool's output is a rolling tail: on a terminal a few lines
// redrawn in place, never the whole output on one line; on a pipe each
// line once. Reproduced on the old starter: every update reprinted the
// output so far on one line.
func TestRunRollingTail(t *testing.T) {
	ws := workspace(t, 30, "0.1")
	tm := run(t, ws, nil, "run", "-workspace", ws, "run ./test.sh")
	tm.waitFor("Run ended")
	tm.exitCode()
	for _, line := range strings.Split(tm.Screen(), "\n") {
		if strings.Count(line, "of the test") > 1 && !strings.Contains(line, "✗") {
			t.Fatalf("partial output on one line: %q", line)
		}
	}
	// (Which lines the tail last showed depends on when the partial results
	// came: the last lines may arrive only with the tool's end.)
	if !strings.Contains(tm.Raw(), "\x1b[") || !strings.Contains(tm.Raw(), "│ line ") {
		t.Fatal("no tail redrawn in place")
	}

	// On a pipe each line of a running tool's output is appended once, never
	// reprinted. (A line that arrives with the tool's end rather than in a
	// partial result is shown only in the result: how many of the last lines
	// do depends on timing, so the test asks for at most once.)
	out, _ := runPiped(t, ws, nil, "run", "-workspace", ws, "run ./test.sh")
	calls := strings.Count(out, "⚙ bash")
	shown := 0
	for i := 1; i <= 30; i++ {
		n := strings.Count(out, fmt.Sprintf("│ line %d of the test\n", i))
		if n > calls {
			t.Fatalf("line %d shown %d times for %d bash calls:\n%s", i, n, calls, out)
		}
		shown += n
	}
	if shown == 0 {
		t.Fatalf("no line of the running tool's output was shown:\n%s", out)
	}
	if strings.Contains(out, "\x1b[") {
		t.Fatal("escape sequences on a pipe")
	}
}

// Input with a field the starter does not know, or a field of the wrong
// type, is refused naming the JSON field, not a Go type. Reproduced on the
// old starter: "promt" was accepted silently (and the run started with no
// prompt), and a model given as a string was refused as "Go struct field
// AgentLoopInput.model of type agent.ModelRef".
func TestRunInputErrorsNameFields(t *testing.T) {
	ws := workspace(t, 1, "0")
	path := filepath.Join(ws, "in.json")
	if err := os.WriteFile(path, []byte(`{"promt": "hello", "model": {"provider": "scripted", "id": "demo"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := runPiped(t, ws, nil, "run", "-input", path)
	if code != cli.ExitRefused || !strings.Contains(out, `unknown field "promt"`) {
		t.Fatalf("exit code %d, want %d and the field named:\n%s", code, cli.ExitRefused, out)
	}
	if err := os.WriteFile(path, []byte(`{"prompt": "hello", "model": "scripted/demo"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code = runPiped(t, ws, nil, "run", "-input", path)
	if code != cli.ExitRefused || !strings.Contains(out, "model: got a JSON string, want a JSON object") || strings.Contains(out, "agent.") {
		t.Fatalf("exit code %d, want %d and the field named without Go types:\n%s", code, cli.ExitRefused, out)
	}
}

// A run whose model provider is down says so while the model call is
// retried: the attempt, the next try and the last failure; Ctrl-C aborts
// it. Reproduced on the old starter: nothing but "agent start" for as
// long as the retries went on.
func TestRunSaysTheProviderIsRetried(t *testing.T) {
	ws := workspace(t, 1, "0")
	tm := run(t, ws, nil, "run", "-model", "ollama/qwen3:8b", "-workspace", ws, "hello")
	tm.waitFor("ModelTurn is retrying: attempt ")
	tm.waitForAfter("ModelTurn is retrying: attempt ", "next try in ")
	tm.waitForAfter("ModelTurn is retrying: attempt ", "last failure: connection error")
	tm.send("\x03")
	tm.waitFor("Run ended: stopReason aborted")
	if code := tm.exitCode(); code != cli.ExitAborted {
		t.Fatalf("exit code %d, want %d", code, cli.ExitAborted)
	}
}

// `session prompt` follows the run it starts as `run` does: Ctrl-C aborts
// it, the status line says so, and the exit code is the aborted one.
// Reproduced on the old starter: Ctrl-C ended it with "context canceled",
// exit 1, and the run went on.
func TestSessionPromptCtrlCAbortsTheRun(t *testing.T) {
	ws := workspace(t, 300, "0.2")
	out, code := runPiped(t, ws, nil, "session", "start", "-workspace", ws)
	if code != 0 {
		t.Fatalf("session start: exit %d:\n%s", code, out)
	}
	id := strings.TrimSpace(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:])
	tm := run(t, ws, nil, "session", "prompt", id, "run ./test.sh")
	tm.waitFor("line 3 of the test")
	tm.send("\x03")
	tm.waitFor("── aborted")
	if code := tm.exitCode(); code != cli.ExitAborted {
		t.Fatalf("exit code %d, want %d", code, cli.ExitAborted)
	}
}
