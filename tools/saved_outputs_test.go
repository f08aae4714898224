package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durable-agents/agentloop/agent"
)

// runScoped runs bash in ws for the run scope names and returns the path
// of its full output.
func runScoped(t *testing.T, tool Tool, ws, scope, command string) string {
	t.Helper()
	r, err := tool.Execute(context.Background(), Call{ID: "c", Name: BashToolName, Args: map[string]any{"command": command}, Workspace: ws, Scope: scope})
	if err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	got := agent.TextOf(r.Content)
	i := strings.LastIndex(got, "Full output: ")
	if i < 0 {
		t.Fatalf("no full output in %q", clip(got))
	}
	return strings.TrimSuffix(got[i+len("Full output: "):], "]")
}

func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	for _, f := range listOutputs(dir) {
		n += f.size
	}
	return n
}

// A run's outputs stay within its cap: the oldest go first, the newest is
// kept whole; another run's are untouched; one output over the whole cap
// is cut there and says why.
func TestSavedOutputsPerRunCap(t *testing.T) {
	ws := t.TempDir()
	const runCap = 1 << 20
	saved := NewSavedOutputs(filepath.Join(t.TempDir(), "outputs"), runCap)
	tool := NewBashTool(BashOptions{Outputs: saved})
	const sixHundredKB = "yes | head -c 600000"
	other := runScoped(t, tool, ws, "ns/run-b", sixHundredKB)
	first := runScoped(t, tool, ws, "ns/run-a", sixHundredKB)
	second := runScoped(t, tool, ws, "ns/run-a", sixHundredKB)
	if filepath.Dir(first) != saved.RunDir("ns/run-a") || filepath.Dir(other) != saved.RunDir("ns/run-b") {
		t.Fatalf("outputs %s and %s are not in their runs' directories", first, other)
	}
	if _, err := os.Stat(first); !os.IsNotExist(err) {
		t.Errorf("the run's oldest output is still there (%v)", err)
	}
	for _, p := range []string{second, other} {
		if st, err := os.Stat(p); err != nil || st.Size() != 600000 {
			t.Errorf("%s: want 600000 bytes kept, got %v %v", p, st, err)
		}
	}
	if n := dirBytes(t, saved.RunDir("ns/run-a")); n > runCap {
		t.Errorf("run a holds %d bytes, over its cap of %d", n, runCap)
	}
	for _, dir := range []string{saved.Root(), saved.RunDir("ns/run-a")} {
		if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("%s: want mode 0700, got %v %v", dir, st, err)
		}
	}

	big := runScoped(t, tool, ws, "ns/run-a", "yes | head -c 1500000")
	b, err := os.ReadFile(big)
	must(t, err)
	wantContains(t, string(b[len(b)-200:]), "this run's saved outputs are at their cap of 1.0MB")
	if n := dirBytes(t, saved.RunDir("ns/run-a")); n > runCap+200 {
		t.Errorf("run a holds %d bytes, over its cap of %d and the note", n, runCap)
	}
}

// Prune removes outputs by age, then the oldest beyond the total (not the
// young ones), then the run directories left empty.
func TestSavedOutputsPrune(t *testing.T) {
	saved := NewSavedOutputs(filepath.Join(t.TempDir(), "outputs"), -1)
	write := func(scope, name string, size int, age time.Duration) string {
		dir := saved.RunDir(scope)
		must(t, os.MkdirAll(dir, 0o700))
		p := filepath.Join(dir, name)
		must(t, os.WriteFile(p, make([]byte, size), 0o600))
		mod := time.Now().Add(-age)
		must(t, os.Chtimes(p, mod, mod))
		return p
	}
	ancient := write("r1", "ancient.log", 10, 30*24*time.Hour)
	old := write("r2", "old.log", 1000, 5*time.Hour)
	older := write("r2", "older.log", 1000, 6*time.Hour)
	young := write("r3", "young.log", 1000, time.Minute)
	st, err := saved.Prune(OutputLimits{MaxAge: 7 * 24 * time.Hour, MaxBytes: 1500, MinAge: 10 * time.Minute})
	must(t, err)
	if st.Removed != 3 || st.Kept != 1 || st.KeptBytes != 1000 {
		t.Errorf("stats %+v, want 3 removed, 1 kept of 1000 bytes", st)
	}
	for _, p := range []string{ancient, old, older} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there", p)
		}
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("the young output went: %v", err)
	}
	for _, scope := range []string{"r1", "r2"} {
		if _, err := os.Stat(saved.RunDir(scope)); !os.IsNotExist(err) {
			t.Errorf("the empty directory of %s is still there", scope)
		}
	}
}

// A root that is not this user's own directory (a symlink planted in a
// shared /tmp) keeps nothing, and the notice says why.
func TestSavedOutputsRefuseAPlantedRoot(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "outputs")
	must(t, os.Symlink(t.TempDir(), root))
	tool := NewBashTool(BashOptions{Outputs: NewSavedOutputs(root, 0)})
	got := text(t, tool, t.TempDir(), map[string]any{"command": "seq 1 3000"})
	wantContains(t, got, "Full output: unavailable ("+root+" is not a directory of this worker's user)]")
}

// A workspace that holds the worker's state directory (runs working in
// the worker's home) holds every run's saved outputs too: the read tools
// still refuse another run's, by path and in their walks, and read the
// run's own when asked for them.
func TestSavedOutputsFencedInsideTheWorkspace(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	saved := NewSavedOutputs(filepath.Join(ws, ".local", "state", "agentloop", "bash-output"), 0)
	byName := map[string]Tool{}
	for _, tool := range Builtins(BuiltinOptions{BashOutputs: saved}) {
		byName[tool.Definition().Name] = tool
	}
	call := func(name, scope string, args map[string]any) (string, error) {
		r, err := byName[name].Execute(context.Background(), Call{ID: "c", Name: name, Args: args, Workspace: ws, Scope: scope})
		if err != nil {
			return err.Error(), err
		}
		return agent.TextOf(r.Content), nil
	}
	pathA := runScoped(t, byName[BashToolName], ws, "ns/run-a", `for i in $(seq 3000); do echo "SAVED-A-$i"; done`)
	rel, err := filepath.Rel(ws, pathA)
	must(t, err)
	if got, err := call("read", "ns/run-a", map[string]any{"path": rel}); err != nil || !strings.HasPrefix(got, "SAVED-A-1\n") {
		t.Errorf("run a reads its own output: %v %q", err, clip(got))
	}
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"read", map[string]any{"path": pathA}},
		{"read", map[string]any{"path": rel}},
		{"grep", map[string]any{"pattern": "SAVED-A-7$", "path": filepath.Dir(rel)}},
		{"ls", map[string]any{"path": filepath.Dir(rel)}},
		{"find", map[string]any{"pattern": "*.log", "path": filepath.Dir(filepath.Dir(rel))}},
	} {
		got, err := call(c.name, "ns/run-b", c.args)
		if err == nil || !strings.Contains(got, "is outside the workspace") {
			t.Errorf("run b %s %v: want a refusal, got %v %q", c.name, c.args, err, clip(got))
		}
	}
	// Walks of the whole workspace pass the outputs by.
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"grep", map[string]any{"pattern": "SAVED-A-7$"}},
		{"find", map[string]any{"pattern": "**/*.log"}},
	} {
		got, _ := call(c.name, "ns/run-b", c.args)
		if strings.Contains(got, "SAVED-A-7") || strings.Contains(got, filepath.Base(pathA)) {
			t.Errorf("run b's %s of the workspace found run a's output: %q", c.name, clip(got))
		}
		// As in pi, where they lie outside the project, a run's own
		// outputs are not part of a walk of its workspace either.
		if got, _ := call(c.name, "ns/run-a", c.args); strings.Contains(got, filepath.Base(pathA)) {
			t.Errorf("run a's %s of the workspace lists its outputs: %q", c.name, clip(got))
		}
	}
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"grep", map[string]any{"pattern": "SAVED-A-7$", "path": filepath.Dir(rel)}},
		{"find", map[string]any{"pattern": "*.log", "path": filepath.Dir(rel)}},
		{"ls", map[string]any{"path": filepath.Dir(rel)}},
	} {
		if got, err := call(c.name, "ns/run-a", c.args); err != nil || !strings.Contains(got, filepath.Base(pathA)) {
			t.Errorf("run a's %s of its own outputs: %v %q", c.name, err, clip(got))
		}
	}
}
