package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/internal/sandbox"
)

func newTestBash(t *testing.T) *BashTool {
	return NewBashTool(BashOptions{KillGrace: 300 * time.Millisecond, OutputDir: t.TempDir()})
}

func TestBashOutputAndExitCodes(t *testing.T) {
	ws := t.TempDir()
	tool := newTestBash(t)
	tests := []struct {
		name    string
		command string
		want    string
		wantErr string
	}{
		{"stdout", "echo hello", "hello\n", ""},
		{"stderr joins stdout", "echo out; echo err >&2", "out\nerr\n", ""},
		{"no output", "true", "(no output)", ""},
		{"runs in the workspace", "pwd", ws + "\n", ""},
		{"non-zero exit", "echo partial; exit 3", "", "partial\n\n\nCommand exited with code 3"},
		{"non-zero exit without output", "exit 1", "", "(no output)\n\nCommand exited with code 1"},
		{"killed by a signal", "kill -SEGV $$", "", "(no output)\n\n" + signalStatus(t, "segmentation fault", 139)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.wantErr != "" {
				if got := failure(t, tool, ws, map[string]any{"command": tc.command}); got != tc.wantErr {
					t.Errorf("error %q, want %q", got, tc.wantErr)
				}
				return
			}
			if got := text(t, tool, ws, map[string]any{"command": tc.command}); got != tc.want {
				t.Errorf("output %q, want %q", got, tc.want)
			}
		})
	}
}

// bashCutDetails is what a bash result whose output was cut has in its
// details.
type bashCutDetails struct {
	Truncation     Truncation `json:"truncation"`
	FullOutputPath string     `json:"fullOutputPath"`
}

// runCut runs a command whose output is cut and returns the result's text
// and details.
func runCut(t *testing.T, tool Tool, ws, command string) (string, bashCutDetails) {
	t.Helper()
	res, err := run(t, tool, ws, map[string]any{"command": command})
	must(t, err)
	var d bashCutDetails
	must(t, json.Unmarshal(res.Details, &d))
	return agent.TextOf(res.Content), d
}

func TestBashTailTruncationKeepsFullOutput(t *testing.T) {
	ws := t.TempDir()
	tool := newTestBash(t)
	got, d := runCut(t, tool, ws, "seq 1 3000")
	wantContains(t, got, "\n3000\n", "[Showing lines 1002-3001 of 3001. Full output: "+d.FullOutputPath+"]")
	if strings.Contains(got, "\n1001\n") {
		t.Errorf("head of the output should be cut")
	}
	full, err := os.ReadFile(d.FullOutputPath)
	must(t, err)
	if !strings.HasPrefix(string(full), "1\n2\n") || !strings.HasSuffix(string(full), "2999\n3000\n") {
		t.Errorf("full output file is incomplete: %d bytes", len(full))
	}

	// Bytes: 1000 lines of 100 bytes exceed 50 KB first.
	got = text(t, tool, ws, map[string]any{"command": "for i in $(seq 1 1000); do printf '%099d\\n' $i; done"})
	wantContains(t, got, "[Showing lines 489-1001 of 1001 (50.0KB limit). Full output: ")

	// One huge line: its end is kept.
	got = text(t, tool, ws, map[string]any{"command": "head -c 70000 /dev/zero | tr '\\0' x; printf END"})
	wantContains(t, got, "xEND\n\n[Showing last 50.0KB of line 1 (line is 68.4KB). Full output: ")
}

// signalStatus is how a shell killed by a signal is reported: by name
// when the worker is its parent, as bwrap's exit code 128+n under bwrap,
// which passes the death on as bash reports a child's.
func signalStatus(t *testing.T, name string, code int) string {
	if defaultSandbox(t).Mode() == sandbox.Bwrap {
		return "Command exited with code " + strconv.Itoa(code)
	}
	return "Command terminated by signal " + name
}

func defaultSandbox(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	sb, err := sandbox.Default()
	if err != nil {
		t.Fatal(err)
	}
	return sb
}

// startChildren returns a command that starts two background sleeps and a
// nested shell with a sleep of its own, each sleeping for marker (see
// SleepMarker), writes "started" to file, then waits.
func startChildren(file, marker string, trapTerm bool) string {
	prefix := ""
	if trapTerm {
		prefix = "trap '' TERM; "
	}
	return prefix + "sleep " + marker + " & (sleep " + marker + "; true) & bash -c 'sleep " + marker + " & echo started >> " + file + "; wait' & wait"
}

func TestBashTimeoutKillsProcessTree(t *testing.T) {
	for _, trap := range []bool{false, true} {
		t.Run("ignores SIGTERM="+strconv.FormatBool(trap), func(t *testing.T) {
			// A timeout that ends the command before its tree started
			// (bash still starting on a loaded machine) shows nothing of
			// the kill: such a call is made again with a longer timeout.
			for _, timeout := range []float64{0.5, 3, 10} {
				ws := t.TempDir()
				marker := SleepMarker()
				start := time.Now()
				got := failure(t, newTestBash(t), ws, map[string]any{"command": startChildren("started", marker, trap), "timeout": timeout})
				if want := fmt.Sprintf("Command timed out after %g seconds", timeout); got != want {
					t.Errorf("error %q, want %q", got, want)
				}
				// The tree's sleeps last 3000 s: a call back within a minute
				// was ended by its timeout, however loaded the machine.
				if d := time.Since(start); d > time.Minute {
					t.Errorf("took %v", d)
				}
				RequireNoProcessesWith(t, marker, 2*time.Second)
				if b, _ := os.ReadFile(filepath.Join(ws, "started")); len(strings.Fields(string(b))) == 0 {
					t.Logf("the tree had not started within %g s; again with a longer timeout", timeout)
					continue
				}
				return
			}
			t.Fatal("the command's tree never started before its timeout")
		})
	}
}

func TestBashCancellationKillsProcessTree(t *testing.T) {
	ws := t.TempDir()
	marker := SleepMarker()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := newTestBash(t).Execute(ctx, Call{Args: map[string]any{"command": "echo started; " + startChildren("started", marker, false)}, Workspace: ws})
		done <- err
	}()
	readLines(t, filepath.Join(ws, "started"), 1)
	if n := len(ProcessesWith(marker)); n < 3 {
		t.Fatalf("%d sleeps running, want 3", n)
	}
	cancel()
	select {
	case err := <-done:
		if err == nil || err.Error() != "started\n\n\nCommand aborted" {
			t.Errorf("error %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelled command did not return")
	}
	RequireNoProcessesWith(t, marker, 2*time.Second)
}

// workerShutdown is a worker shutdown's context cause, as the activities
// package makes it.
type workerShutdown struct{}

func (workerShutdown) Error() string        { return "worker shutting down" }
func (workerShutdown) WorkerShutdown() bool { return true }

// A command stopped because its worker shuts down is interrupted, not
// aborted: bash ends the process tree as for an abort but returns an
// InterruptedError instead of "Command aborted", which the activity turns
// into a retryable failure rather than a result.
func TestBashWorkerShutdownInterruptsTheCommand(t *testing.T) {
	ws := t.TempDir()
	marker := SleepMarker()
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := newTestBash(t).Execute(ctx, Call{Args: map[string]any{"command": "echo started; " + startChildren("started", marker, false)}, Workspace: ws})
		done <- err
	}()
	readLines(t, filepath.Join(ws, "started"), 1)
	cancel(workerShutdown{})
	select {
	case err := <-done:
		if !IsInterrupted(err) || strings.Contains(err.Error(), "Command aborted") {
			t.Errorf("error %v, want an interrupted call", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("interrupted command did not return")
	}
	RequireNoProcessesWith(t, marker, 2*time.Second)
}

func TestBashBackgroundChildrenDoNotOutliveTheCall(t *testing.T) {
	ws := t.TempDir()
	marker := SleepMarker()
	text(t, newTestBash(t), ws, map[string]any{"command": "sleep " + marker + " > /dev/null 2>&1 & echo started > started"})
	readLines(t, filepath.Join(ws, "started"), 1)
	RequireNoProcessesWith(t, marker, 2*time.Second)
}

func TestBashStreamsPartialResults(t *testing.T) {
	ws := t.TempDir()
	var mu sync.Mutex
	var updates []string
	call := Call{
		Args:      map[string]any{"command": "echo one; sleep 0.3; echo two"},
		Workspace: ws,
		Update: func(r agent.ToolResult) {
			mu.Lock()
			defer mu.Unlock()
			updates = append(updates, agent.TextOf(r.Content))
		},
	}
	r, err := newTestBash(t).Execute(context.Background(), call)
	must(t, err)
	if got := agent.TextOf(r.Content); got != "one\ntwo\n" {
		t.Errorf("final %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(updates) < 3 || updates[0] != "" || updates[1] != "one\n" || updates[len(updates)-1] != "one\ntwo\n" {
		t.Errorf("updates %q: want the empty start, one, then one two", updates)
	}
}

func TestBashTimeoutOptions(t *testing.T) {
	tool := NewBashTool(BashOptions{DefaultTimeout: 300 * time.Millisecond, MaxTimeout: time.Hour})
	if got := failure(t, tool, t.TempDir(), map[string]any{"command": "sleep 5"}); got != "Command timed out after 0.3 seconds" {
		t.Errorf("default timeout: %q", got)
	}
	wantContains(t, tool.Definition().Description, "(default: 0.3, maximum: 3600)")
	capped := NewBashTool(BashOptions{MaxTimeout: 200 * time.Millisecond})
	if got := failure(t, capped, t.TempDir(), map[string]any{"command": "sleep 5", "timeout": 100.0}); got != "Command timed out after 0.2 seconds" {
		t.Errorf("capped timeout: %q", got)
	}
	got := failure(t, tool, filepath.Join(t.TempDir(), "gone"), map[string]any{"command": "true"})
	wantContains(t, got, "Working directory does not exist: ")
}

// readLines waits until the command has written n lines to file.
func readLines(t *testing.T, file string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(file)
		if lines := strings.Fields(string(b)); len(lines) >= n {
			return lines
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("command did not write %d lines to %s", n, file)
	return nil
}

// The run's sandbox request reaches the command: its variables, and its
// network wish, which a worker that allows no network refuses clearly.
func TestBashRunSandboxRequest(t *testing.T) {
	ws := t.TempDir()
	r, err := newTestBash(t).Execute(context.Background(), Call{Args: map[string]any{"command": "echo $GREETING"}, Workspace: ws,
		Sandbox: &agent.SandboxConfig{Env: map[string]string{"GREETING": "hello from the run"}}})
	must(t, err)
	if got := agent.TextOf(r.Content); got != "hello from the run\n" {
		t.Errorf("got %q", got)
	}
	sb, err := sandbox.New(sandbox.Config{Mode: defaultSandbox(t).Mode(), NoNetwork: true})
	must(t, err)
	t.Cleanup(func() { sb.Close() })
	tool := NewBashTool(BashOptions{OutputDir: t.TempDir(), Sandbox: sb})
	_, err = tool.Execute(context.Background(), Call{Args: map[string]any{"command": "true"}, Workspace: ws, Sandbox: &agent.SandboxConfig{Network: "on"}})
	if err == nil || err.Error() != "network is off for tool processes on this worker" {
		t.Errorf("got %v", err)
	}
}
