package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Spec.ReadOnly: a run's saved outputs, inside a hidden state directory,
// are readable at their own path and not writable; the state directory
// around them, another run's directory among it, stays hidden.
func TestReadOnlyDirInsideHiddenState(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	state := filepath.Join(base, "state")
	own, other := filepath.Join(state, "outputs", "run-a"), filepath.Join(state, "outputs", "run-b")
	for _, d := range []string{ws, own, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(own, "out.log"), []byte("OWN-OUTPUT\n"), 0o600)
	os.WriteFile(filepath.Join(other, "out.log"), []byte("OTHER-OUTPUT\n"), 0o600)
	os.WriteFile(filepath.Join(state, "journal"), []byte("JOURNAL\n"), 0o600)
	for mode, s := range modes(t, Config{Hide: []string{state}}) {
		t.Run(string(mode), func(t *testing.T) {
			if s.runAs != nil && s.idmap == nil {
				t.Skip("commands of -sandbox-user get no read-only directories (readonly.go); the Landlock fallback needs it as root")
			}
			command := `cat ` + own + `/out.log; echo x > ` + own + `/new && echo WROTE; rm ` + own + `/out.log && echo REMOVED; ` +
				`cat ` + other + `/out.log; ls ` + filepath.Dir(own) + `; cat ` + state + `/journal`
			got, _ := runSpec(t, s, Spec{Shell: "/bin/bash", Command: command, Dir: ws, ReadOnly: []string{own}})
			t.Logf("%s", got)
			wantIn(t, got, "OWN-OUTPUT\n")
			for _, leak := range []string{"WROTE", "REMOVED", "OTHER-OUTPUT", "\nrun-b\n", "JOURNAL"} {
				if strings.Contains("\n"+got, leak) {
					t.Errorf("%s in:\n%s", leak, got)
				}
			}
		})
	}
}

// The worker's home as the workspace: bwrap masks its state directory
// inside the workspace, and the run's own outputs still show through the
// mask (Landlock refuses such a workspace: TestHiddenInsideTheWorkspace).
func TestReadOnlyDirInsideAMaskInTheWorkspace(t *testing.T) {
	ws := t.TempDir()
	state := filepath.Join(ws, ".local", "state", "agentloop")
	own := filepath.Join(state, "bash-output", "run-a")
	if err := os.MkdirAll(own, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(own, "out.log"), []byte("OWN-OUTPUT\n"), 0o600)
	os.WriteFile(filepath.Join(state, "journal"), []byte("JOURNAL\n"), 0o600)
	s, err := New(Config{Mode: Bwrap, Hide: []string{state}})
	if err != nil {
		t.Skipf("bwrap unavailable: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	b, _ := runSpec(t, s, Spec{Shell: "/bin/bash", Command: "echo hi > f && cat f; cat " + own + "/out.log; cat .local/state/agentloop/journal",
		Dir: ws, ReadOnly: []string{own}})
	t.Logf("%s", b)
	wantIn(t, b, "hi\n", "OWN-OUTPUT\n")
	if strings.Contains(b, "JOURNAL") {
		t.Errorf("read the journal:\n%s", b)
	}
}

// Commands of another user (RunAs) run bwrap as that user, which cannot
// reach the worker's private state directory: they get no mount of the
// run's outputs, and run as ever.
func TestReadOnlyDirSkippedForAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("runs commands as nobody, which needs root")
	}
	base := t.TempDir() // 0700, root's
	own := filepath.Join(base, "state", "run-a")
	if err := os.MkdirAll(own, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(own, "out.log"), []byte("OWN-OUTPUT\n"), 0o600)
	ws, err := os.MkdirTemp("", "readonly-ws-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(ws)
	os.Chmod(ws, 0o755)
	for mode, s := range modes(t, Config{RunAs: &syscall.Credential{Uid: 65534, Gid: 65534}}) {
		t.Run(string(mode), func(t *testing.T) {
			b, _ := runSpec(t, s, Spec{Shell: "/bin/bash", Command: "echo RAN; id -u; cat " + own + "/out.log", Dir: ws, ReadOnly: []string{own}})
			t.Logf("%s", b)
			wantIn(t, b, "RAN\n65534\n")
			if strings.Contains(b, "OWN-OUTPUT") {
				t.Errorf("another user read the worker's 0600 file:\n%s", b)
			}
		})
	}
}
