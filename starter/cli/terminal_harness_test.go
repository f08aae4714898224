package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/durable-agents/agentloop/internal/harness/devserver"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
)

// The terminal tests drive the real starter binary through a real pty
// against a dev server and the real worker (its scripted demo model and
// real tools), and read what the terminal shows.

// appear bounds waits for what happens on its own: generous, so that the
// tests pass on a loaded machine; only a hang reaches them.
const appear = 3 * time.Minute

var (
	setupOnce sync.Once
	setupErr  error
	srv       *devserver.Server
	worker    *exec.Cmd
	binDir    string
	starter   string // the starter binary
	hostPort  string
	storeDir  string
	gated     *httptest.Server
)

func TestMain(m *testing.M) {
	code := m.Run()
	if worker != nil && worker.Process != nil {
		_ = worker.Process.Kill()
		_ = worker.Wait()
	}
	if srv != nil {
		_ = srv.Stop()
	}
	if gated != nil {
		gated.Close()
	}
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// setup starts the dev server and one worker on the default task queue
// (sessions start there), and builds the starter, once per test binary.
func setup(t *testing.T) {
	t.Helper()
	setupOnce.Do(func() { setupErr = doSetup() })
	if setupErr != nil {
		t.Fatal(setupErr)
	}
}

func doSetup() error {
	var err error
	if binDir, err = os.MkdirTemp("", "terminal-test-"); err != nil {
		return err
	}
	storeDir = filepath.Join(binDir, "content")
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return err
	}
	// $STARTER_BIN runs the tests against another build of the starter,
	// such as the one before a fix.
	starter = os.Getenv("STARTER_BIN")
	if starter == "" {
		starter = filepath.Join(binDir, "starter")
		build := exec.Command("go", "build", "-o", starter, "./starter")
		build.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("go build ./starter: %v\n%s", err, out)
		}
	}
	workerBin, err := testenv.WorkerBin(binDir)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if srv, err = devserver.Start(ctx, devserver.Options{}); err != nil {
		return err
	}
	hostPort = srv.FrontendHostPort()
	logf, err := os.Create(filepath.Join(binDir, "worker.log"))
	if err != nil {
		return err
	}
	worker = exec.Command(workerBin, "-address", hostPort, "-store", storeDir,
		"-tool-journal", filepath.Join(binDir, "journal"), "-log-level", "info")
	worker.Stdout = logf
	stderr, err := worker.StderrPipe()
	if err != nil {
		return err
	}
	// A provider that is down: nothing listens on port 1; and the gated
	// model (gatedmodel_test.go).
	gated = startGatedModel()
	worker.Env = append(os.Environ(), "OLLAMA_BASE_URL=http://127.0.0.1:1/v1",
		"OPENAI_COMPATIBLE_BASE_URL="+gated.URL+"/v1", "OPENAI_COMPATIBLE_API_KEY=none")
	if err := worker.Start(); err != nil {
		return err
	}
	// Wait until the worker made its version the deployment's current one
	// (a fresh server has none): from then on new sessions and runs go to
	// it, and no test sees a "no worker polls" line it did not ask for.
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		var once sync.Once
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if strings.Contains(sc.Text(), "this one is now current") {
				once.Do(func() { close(ready) })
			}
		}
	}()
	select {
	case <-ready:
		return nil
	case <-time.After(appear):
		return fmt.Errorf("the worker did not make its version current within %v (see %s)", appear, logf.Name())
	}
}

// term is the starter running on a pty (or, with piped, on a pipe).
type term struct {
	t    *testing.T
	pty  *os.File
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

// run starts the starter with args on a new pty, in dir, with extra
// environment variables.
func run(t *testing.T, dir string, env []string, args ...string) *term {
	t.Helper()
	setup(t)
	cmd := exec.Command(starter, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+hostPort, "AGENTLOOP_STORE="+storeDir, "TERM=xterm")
	cmd.Env = append(cmd.Env, env...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	tm := &term{t: t, pty: f, cmd: cmd, done: make(chan struct{})}
	go func() {
		_, _ = io.Copy(tm, f)
		close(tm.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		f.Close()
		if t.Failed() {
			t.Logf("terminal:\n%s", tm.Screen())
		}
	})
	return tm
}

// runPiped runs the starter to its end with its output on a pipe, and
// returns the output and the exit code.
func runPiped(t *testing.T, dir string, env []string, args ...string) (string, int) {
	t.Helper()
	setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), appear)
	defer cancel()
	cmd := exec.CommandContext(ctx, starter, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+hostPort, "AGENTLOOP_STORE="+storeDir)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("starter %v did not end within %v:\n%s", args, appear, out)
	}
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return string(out), code
}

func (tm *term) Write(p []byte) (int, error) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.Write(p)
}

// Raw is everything the terminal got, escape sequences included.
func (tm *term) Raw() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.String()
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// Screen is what the terminal got without escape sequences and carriage
// returns.
func (tm *term) Screen() string {
	return strings.ReplaceAll(ansi.ReplaceAllString(tm.Raw(), ""), "\r", "")
}

// waitFor waits until the screen contains text.
func (tm *term) waitFor(text string) {
	tm.t.Helper()
	deadline := time.Now().Add(appear)
	for !strings.Contains(tm.Screen(), text) {
		select {
		case <-tm.done:
			if strings.Contains(tm.Screen(), text) {
				return
			}
			tm.t.Fatalf("the starter ended without showing %q", text)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("%q not shown within %v", text, appear)
		}
	}
}

// waitCount waits until the screen shows text n times.
func (tm *term) waitCount(text string, n int) {
	tm.t.Helper()
	deadline := time.Now().Add(appear)
	for strings.Count(tm.Screen(), text) < n {
		if time.Now().After(deadline) {
			tm.t.Fatalf("%q not shown %d times within %v", text, n, appear)
		}
		select {
		case <-tm.done:
			if strings.Count(tm.Screen(), text) < n {
				tm.t.Fatalf("the starter ended without showing %q %d times", text, n)
			}
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitForAfter waits until the screen shows text after the first
// occurrence of mark.
func (tm *term) waitForAfter(mark, text string) {
	tm.t.Helper()
	tm.waitFor(mark)
	deadline := time.Now().Add(appear)
	for {
		s := tm.Screen()
		if strings.Contains(s[strings.Index(s, mark):], text) {
			return
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("%q not shown after %q within %v", text, mark, appear)
		}
		select {
		case <-tm.done:
			s = tm.Screen()
			if !strings.Contains(s[strings.Index(s, mark):], text) {
				tm.t.Fatalf("the starter ended without showing %q after %q", text, mark)
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// send types s.
func (tm *term) send(s string) {
	tm.t.Helper()
	if _, err := tm.pty.Write([]byte(s)); err != nil {
		tm.t.Fatal(err)
	}
}

// exitCode waits for the starter to end and returns its exit code.
func (tm *term) exitCode() int {
	tm.t.Helper()
	select {
	case <-tm.done:
	case <-time.After(appear):
		tm.t.Fatalf("the starter did not end within %v", appear)
	}
	err := tm.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		tm.t.Fatal(err)
	}
	return 0
}

// workspace makes a workspace for the demo model: test.sh prints lines
// slowly, so that a run's bash call works for a while and streams.
func workspace(t *testing.T, lines int, pause string) string {
	t.Helper()
	dir := t.TempDir()
	test := fmt.Sprintf("#!/bin/sh\nfor i in $(seq 1 %d); do echo \"line $i of the test\"; sleep %s; done\nexit 1\n", lines, pause)
	if err := os.WriteFile(filepath.Join(dir, "test.sh"), []byte(test), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "greet.sh"), []byte("#!/bin/sh\necho \"Helo, $1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
