package tools_test

// Issue 27's row "another run's saved output", through the real worker:
// bash's full output of one run (A) is read by that run's own read, grep,
// ls and find, and by nothing of another run (B) in another workspace,
// served by the same worker.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/internal/harness/fakeprovider"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
)

// readingCalls are what a run does with a saved output: read it, grep it,
// list its directory, find it, and cat it with bash.
func readingCalls(prefix, path string) []toolCall {
	dir := filepath.Dir(path)
	return []toolCall{
		{prefix + "_read", "read", map[string]any{"path": path}},
		{prefix + "_grep", "grep", map[string]any{"pattern": "^SAVED-A-7$", "path": path}},
		{prefix + "_ls", "ls", map[string]any{"path": dir}},
		{prefix + "_find", "find", map[string]any{"pattern": "*.log", "path": dir}},
		{prefix + "_bash", "bash", map[string]any{"command": "head -n 3 " + path + "; ls " + dir}},
	}
}

var (
	fullOutput = regexp.MustCompile(`Full output: (/[^\]"\\]+)\]`)
	// savedLine is a line of run A's output (the calls' own patterns end
	// in $).
	savedLine = regexp.MustCompile(`SAVED-A-\d+(\n|\z)`)
)

func TestAttackSavedOutputOfAnotherRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dev server and a real worker process")
	}
	w := newAttackWorld(t)
	for _, mode := range []string{"bwrap", "landlock"} {
		t.Run(mode, func(t *testing.T) { savedOutputRow(t, w, mode) })
	}
}

// savedOutputRow runs A, then B, on a worker of its own in sandbox mode.
func savedOutputRow(t *testing.T, w *attackWorld, mode string) {
	wsA, wsB := filepath.Join(w.base, mode+"-ws-a"), filepath.Join(w.base, mode+"-ws-b")
	for _, d := range []string{wsA, wsB} {
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, os.Chown(d, int(nobody.Uid), int(nobody.Gid)))
	}
	// An output of a run long gone, which the worker's prune at start-up
	// removes (-bash-output-max-age, 7 days by default).
	stale := filepath.Join(w.home, ".local", "state", "agentloop", "bash-output", "stale-run-"+mode, "agentloop-bash-stale.log")
	require.NoError(t, os.MkdirAll(filepath.Dir(stale), 0o700))
	require.NoError(t, os.WriteFile(stale, []byte("STALE\n"), 0o600))
	month := time.Now().Add(-30 * 24 * time.Hour)
	require.NoError(t, os.Chtimes(stale, month, month))
	for _, p := range []string{filepath.Dir(filepath.Dir(stale)), filepath.Dir(stale), stale} {
		require.NoError(t, os.Chown(p, int(nobody.Uid), int(nobody.Gid)))
	}
	model := fakeprovider.New(t)
	queue := "attack-saved-" + mode + "-" + testenv.Suffix()
	w.startWorker(t, queue, model.URL, "-sandbox", mode)
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Dir(stale))
		return os.IsNotExist(err)
	}, time.Minute, 100*time.Millisecond, "the worker's prune at start-up removes a month-old output and its run's directory")

	// Run A: a command whose output is over the inline cap, then, as a
	// model reading the notice would, every reading of the path it names.
	var pathA string
	model.Add(callTurn(toolCall{"a_out", "bash", map[string]any{"command": `for i in $(seq 3000); do echo "SAVED-A-$i"; done`}}))
	model.Next = func(req fakeprovider.Request) fakeprovider.Reply {
		if pathA != "" {
			return endTurn("Done.")
		}
		m := fullOutput.FindSubmatch(req.Raw)
		if m == nil {
			return endTurn("Done.") // no notice: the checks below say why
		}
		pathA = string(m[1])
		return callTurn(readingCalls("a", pathA)...)
	}
	outA := w.runTools(t, queue, wsA)
	require.NotEmpty(t, pathA, "run A's bash result names no full output:\n%s", outA["a_out"])
	t.Logf("run A's saved output: %s", pathA)
	for _, id := range []string{"a_read", "a_grep", "a_ls", "a_find", "a_bash"} {
		t.Logf("run A %s:\n%s", id, indent(clipText(outA[id])))
	}
	// Not fatal: run B's row runs whatever A's did.
	assert.Contains(t, outA["a_read"], "SAVED-A-1\nSAVED-A-2\n", "run A reads its own saved output")
	assert.Contains(t, outA["a_grep"], "SAVED-A-7", "run A greps its own saved output")
	assert.Contains(t, outA["a_ls"], filepath.Base(pathA), "run A lists its own saved outputs")
	assert.Contains(t, outA["a_find"], filepath.Base(pathA), "run A finds its own saved outputs")
	assert.Contains(t, outA["a_bash"], "SAVED-A-1\nSAVED-A-2\nSAVED-A-3\n"+filepath.Base(pathA), "run A's bash reads its own saved output")

	// Run B, another workspace on the same worker, knows A's path (a
	// path's shape is no secret) and tries every tool on it, its
	// directory and the directory of every run's outputs.
	model.Next = nil
	root := filepath.Dir(filepath.Dir(pathA))
	calls := append(readingCalls("b", pathA),
		toolCall{"b_ls_root", "ls", map[string]any{"path": root}},
		toolCall{"b_find_root", "find", map[string]any{"pattern": "**/*.log", "path": root}},
		toolCall{"b_grep_root", "grep", map[string]any{"pattern": "SAVED-A-1$", "path": root}},
		toolCall{"b_bash_root", "bash", map[string]any{"command": "ls -R " + root + "; grep -r SAVED-A-1 " + root}},
	)
	model.Add(callTurn(calls...), endTurn("Done."))
	outB := w.runTools(t, queue, wsB)
	for _, c := range calls {
		got := outB[c.id]
		t.Logf("run B %s:\n%s", c.id, indent(clipText(got)))
		if savedLine.MatchString(got) {
			t.Errorf("run B %s read run A's saved output:\n%s", c.id, clipText(got))
		}
		if strings.Contains(strings.ReplaceAll(got, pathA, ""), filepath.Base(pathA)) {
			t.Errorf("run B %s listed run A's saved output:\n%s", c.id, clipText(got))
		}
		want := "is outside the workspace" // as for any path outside it
		if c.name == "bash" {
			// bwrap mounts none of it; Landlock grants nothing of it.
			want = map[string]string{"bwrap": "No such file or directory", "landlock": "Permission denied"}[mode]
		}
		if !strings.Contains(got, want) {
			t.Errorf("run B %s: want %q in:\n%s", c.id, want, clipText(got))
		}
	}
}

// runTools runs the scripted model with the file tools and bash in ws and
// returns each call's result text.
func (w *attackWorld) runTools(t *testing.T, queue, ws string) map[string]string {
	in := agentapi.AgentLoopInput{LoopConfig: agent.LoopConfig{
		Model: agent.ModelRef{Provider: "openai-compatible", ID: "attack"}, Tools: []string{"bash", "read", "grep", "ls", "find"},
		Workspace: ws,
	}, Prompt: "Look at the output."}
	run := testenv.Start(t, w.c, queue, "saved-", in)
	out, res := w.results(t, run)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.NotEmpty(t, out, fmt.Sprintf("run %s made no tool calls", run.GetID()))
	return out
}

// clipText keeps a long result's first lines for the log.
func clipText(s string) string {
	if len(s) <= 400 {
		return s
	}
	return s[:400] + fmt.Sprintf("\n[... %d bytes in all]", len(s))
}
