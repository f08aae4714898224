package termsession

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
	d := starter(t, root, "demo")
	d.waitFor("Run ended: stopReason stop")
	require.Equal(t, 0, d.exit())
	require.Contains(t, d.screen(), "PASS: greet.sh printed 'Hello, Temporal!'")

	// README: starter run -workspace .demo/workspace "list the files"
	r := starter(t, root, "run", "-workspace", ".demo/workspace", "list the files")
	r.waitFor("Run ended: stopReason stop")
	require.Equal(t, 0, r.exit())
	require.Contains(t, r.screen(), "ls returned:\n\n```\ngreet.sh\nREADME.md\ntest.sh\n```")

	// README: starter session chat -workspace .demo/workspace, two prompts.
	chat := starter(t, root, "session", "chat", "-workspace", ".demo/workspace")
	chat.waitFor("Type a prompt")
	chat.typeLine("what can you do?")
	chat.waitFor("- fix the sample project's failing test")
	chat.typeLine("read greet.sh")
	chat.waitFor(`echo "Hello, $name!"`)
	chat.typeLine("run ./test.sh")
	chat.waitForCount("PASS: greet.sh printed 'Hello, Temporal!'", 2)
	chat.typeLine("/quit")
	require.Equal(t, 0, chat.exit())
	require.NotContains(t, chat.screen(), "No more faux responses queued")

	// docs/api.md, "The starter".
	r = starter(t, ws, "run", "-model", "scripted/demo", "-workspace", ".", "fix the failing test")
	r.waitFor("Run ended: stopReason stop")
	require.Equal(t, 0, r.exit())
	require.Contains(t, r.screen(), "The test passes already (PASS: greet.sh printed 'Hello, Temporal!'): there is nothing to fix.")
	runID := regexp.MustCompile(`Run (agent-[0-9a-f]+) started`).FindStringSubmatch(r.screen())[1]

	w := starter(t, ws, "watch", runID)
	w.waitFor("■ agent end")
	require.Equal(t, 0, w.exit())
	st := starter(t, ws, "state", runID)
	st.waitFor(`"status": "ended"`)
	require.Equal(t, 0, st.exit())

	s := starter(t, ws, "session", "start", "-approve-pattern", "bash:command:^rm", "-workspace", ".")
	require.Equal(t, 0, s.exit())
	id := regexp.MustCompile(`(?m)^(session-[0-9a-f]+)$`).FindStringSubmatch(s.screen())[1]
	p := starter(t, ws, "session", "prompt", id, "fix the failing test")
	p.waitFor("there is nothing to fix.")
	require.Equal(t, 0, p.exit())
	require.Equal(t, 0, starter(t, ws, "session", "set", id, "thinking", "high").exit())
	b := starter(t, ws, "session", "budget", id, "maxCostUSD=10,maxTurns=200")
	b.waitFor("spent $0.0000")
	require.Equal(t, 0, b.exit())
	back := starter(t, ws, "session", "chat", id)
	back.waitFor("› fix the failing test")
	back.waitFor("Type a prompt")
	back.typeLine("/quit")
	require.Equal(t, 0, back.exit())
	l := starter(t, ws, "session", "list")
	l.waitFor(id)
	require.Equal(t, 0, l.exit())
}
