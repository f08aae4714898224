package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/durable-agents/agentloop/starter/cli"
)

// Exit codes of runs that end before any model call, through the real
// starter, worker and dev server.

// A session whose budget stops its run before the first model call: the
// run ends "budget" with no model call made (the status line says 0), and
// session prompt, as session start with a prompt, exits with the budget
// code. Reproduced on the starter before: "1 model calls" (the exit code
// was already 5).
func TestSessionBudgetStopBeforeAnyModelCall(t *testing.T) {
	ws := workspace(t, 1, "0")
	id := startSession(t, ws, "-budget", "maxTokens=1")
	out, code := runPiped(t, ws, nil, "session", "prompt", id, "list the files")
	if code != cli.ExitBudget || !strings.Contains(out, "── budget · 0 model calls") {
		t.Fatalf("session prompt stopped by its budget before any model call: exit code %d, want %d and 0 model calls:\n%s", code, cli.ExitBudget, out)
	}
	out, code = runPiped(t, ws, nil, "session", "start", "-workspace", ws, "-budget", "maxTokens=1", "list the files")
	if code != cli.ExitBudget {
		t.Fatalf("session start with a prompt stopped by its budget: exit code %d, want %d:\n%s", code, cli.ExitBudget, out)
	}
}

// A session whose budget is spent refuses the next prompt before any
// model call; the starter exits with the budget code, not the
// code of input refused for what it says, and without the resend hint.
// Reproduced on the starter before (STARTER_BIN): exit code 3.
func TestSessionRefusesARunForItsSpentBudget(t *testing.T) {
	ws := workspace(t, 1, "0")
	id := startSession(t, ws, "-budget", "maxTurns=1")
	out, code := runPiped(t, ws, nil, "session", "prompt", id, "list the files")
	if code != cli.ExitBudget {
		t.Fatalf("the run that spends the budget: exit code %d, want %d:\n%s", code, cli.ExitBudget, out)
	}
	out, code = runPiped(t, ws, nil, "session", "prompt", id, "list the files again")
	if code != cli.ExitBudget || !strings.Contains(out, "Budget exhausted: 1 turns have reached maxTurns 1") ||
		strings.Contains(out, "-update-id") || strings.Contains(out, "(type: ") {
		t.Fatalf("session prompt with its budget spent: exit code %d, want %d, the refusal in words and no resend hint:\n%s", code, cli.ExitBudget, out)
	}
}

// startSession starts an idle session on workspace ws and returns its id.
func startSession(t *testing.T, ws string, flags ...string) string {
	t.Helper()
	out, code := runPiped(t, ws, nil, append([]string{"session", "start", "-workspace", ws}, flags...)...)
	if code != 0 {
		t.Fatalf("session start: exit %d:\n%s", code, out)
	}
	return strings.TrimSpace(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:])
}

// A workspace that is on no worker: the run, or the session, fails when it
// resolves, before any model call, saying which workspace is missing
// where, and the starter exits with the error code. Reproduced on the
// starter before: session start with a prompt said nothing and exited 0.
func TestMissingWorkspaceExitsWithTheErrorCode(t *testing.T) {
	ws := workspace(t, 1, "0")
	typo := filepath.Join(ws, "no-such-dir")
	out, code := runPiped(t, ws, nil, "run", "-workspace", typo, "list the files")
	want := "workspace " + typo + " does not exist on any worker of task queue"
	if code != cli.ExitError || !strings.Contains(out, want) || strings.Contains(out, "type: WorkspaceMissing") {
		t.Fatalf("run with a missing workspace: exit code %d, want %d and %q in words:\n%s", code, cli.ExitError, want, out)
	}
	out, code = runPiped(t, ws, nil, "session", "start", "-workspace", typo, "list the files")
	if code != cli.ExitError || !strings.Contains(out, want) || strings.Contains(out, "-update-id") {
		t.Fatalf("session with a missing workspace: exit code %d, want %d and %q:\n%s", code, cli.ExitError, want, out)
	}
	// Started without a prompt, the session fails as it starts; its first
	// prompt says why, without the resend hint.
	out, code = runPiped(t, ws, nil, "session", "start", "-workspace", typo)
	if code != 0 {
		t.Fatalf("session start: exit %d:\n%s", code, out)
	}
	id := strings.TrimSpace(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:])
	out, code = runPiped(t, ws, nil, "session", "prompt", id, "list the files")
	if code != cli.ExitError || !strings.Contains(out, want) || strings.Contains(out, "-update-id") {
		t.Fatalf("prompt of a session that failed on a missing workspace: exit code %d, want %d and %q:\n%s", code, cli.ExitError, want, out)
	}
	// The chat starts the session, which fails at once: it says why.
	tm := run(t, ws, nil, "session", "chat", "-workspace", typo)
	tm.waitFor(want)
	if code := tm.exitCode(); code != cli.ExitError {
		t.Fatalf("chat with a missing workspace: exit code %d, want %d:\n%s", code, cli.ExitError, tm.Screen())
	}
}
