package cli_test

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every "try this" of the README and docs/api.md with the demo model, in
// order, from a fresh directory after the demo (what scripts/demo runs),
// does what the text says. The README's commands run from the directory
// that holds .demo; docs/api.md's from the workspace (-workspace .).
func TestTryThisWithTheDemoModel(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, ".demo", "workspace")

	// scripts/demo: `starter demo` fixes the failing test.
	d := run(t, root, nil, "demo")
	d.waitFor("Run ended: stopReason stop")
	require.Equal(t, 0, d.exitCode())
	require.Contains(t, d.Screen(), "PASS: greet.sh printed 'Hello, Temporal!'")

	// README: starter run -workspace .demo/workspace "list the files"
	r := run(t, root, nil, "run", "-workspace", ".demo/workspace", "list the files")
	r.waitFor("Run ended: stopReason stop")
	require.Equal(t, 0, r.exitCode())
	require.Contains(t, r.Screen(), "ls returned:\n\n```\ngreet.sh\nREADME.md\ntest.sh\n```")

	// README: starter session chat -workspace .demo/workspace, two prompts.
	chat := run(t, root, nil, "session", "chat", "-workspace", ".demo/workspace")
	chat.waitFor("Type a prompt")
	chat.send("what can you do?\r")
	// Each prompt waits for the run before it to end: a line typed while
	// a run streams steers it (the answer's first lines show before its
	// end).
	chat.waitFor("- fix the sample project's failing test")
	chat.waitCount("■ agent end", 1)
	chat.send("read greet.sh\r")
	chat.waitFor(`echo "Hello, $name!"`)
	chat.waitCount("■ agent end", 2)
	chat.send("run ./test.sh\r")
	chat.waitCount("PASS: greet.sh printed 'Hello, Temporal!'", 2)
	chat.send("/quit\r")
	require.Equal(t, 0, chat.exitCode())
	require.NotContains(t, chat.Screen(), "No more faux responses queued")

	// docs/api.md, "The starter".
	r = run(t, ws, nil, "run", "-model", "scripted/demo", "-workspace", ".", "fix the failing test")
	r.waitFor("Run ended: stopReason stop")
	require.Equal(t, 0, r.exitCode())
	require.Contains(t, r.Screen(), "The test passes already (PASS: greet.sh printed 'Hello, Temporal!'): there is nothing to fix.")
	runID := regexp.MustCompile(`Run (agent-[0-9a-f]+) started`).FindStringSubmatch(r.Screen())[1]

	w := run(t, ws, nil, "watch", runID)
	w.waitFor("■ agent end")
	require.Equal(t, 0, w.exitCode())
	st := run(t, ws, nil, "state", runID)
	st.waitFor(`"status": "ended"`)
	require.Equal(t, 0, st.exitCode())

	s := run(t, ws, nil, "session", "start", "-approve-pattern", "bash:command:^rm", "-workspace", ".")
	require.Equal(t, 0, s.exitCode())
	id := regexp.MustCompile(`(?m)^(session-[0-9a-f]+)$`).FindStringSubmatch(s.Screen())[1]
	p := run(t, ws, nil, "session", "prompt", id, "fix the failing test")
	p.waitFor("there is nothing to fix.")
	require.Equal(t, 0, p.exitCode())
	require.Equal(t, 0, run(t, ws, nil, "session", "set", id, "thinking", "high").exitCode())
	b := run(t, ws, nil, "session", "budget", id, "maxCostUSD=10,maxTurns=200")
	b.waitFor("spent $0.0000")
	require.Equal(t, 0, b.exitCode())
	back := run(t, ws, nil, "session", "chat", id)
	back.waitFor("› fix the failing test")
	back.waitFor("Type a prompt")
	back.send("/quit\r")
	require.Equal(t, 0, back.exitCode())
	l := run(t, ws, nil, "session", "list")
	l.waitFor(id)
	require.Equal(t, 0, l.exitCode())
}
