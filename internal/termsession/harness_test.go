package termsession

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/durable-agents/agentloop/internal/devserver"
	"github.com/durable-agents/agentloop/internal/testenv"
)

// Generous waits for what happens on its own (a worker taking a run, a
// run ending) on a loaded machine; $TERMSESSION_WAIT shortens them to
// reproduce a failure quickly.
var waitLong = 3 * time.Minute

const poll = 50 * time.Millisecond

func init() {
	if d, err := time.ParseDuration(os.Getenv("TERMSESSION_WAIT")); err == nil {
		waitLong = d
	}
}

var (
	hostPort   string
	starterBin string
	storeDir   string
)

// TestMain builds the starter and the worker, starts a dev server of its
// own (the sessions use the default task queue) and one worker process.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "termsession-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	workerBin, err := testenv.WorkerBin(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	srv, err := devserver.Start(ctx, devserver.Options{})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer srv.Stop()
	hostPort, storeDir = srv.FrontendHostPort(), filepath.Join(dir, "content")
	stop, err := startWorker(workerBin, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	return m.Run()
}

func build(dir string) error {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %w", err)
	}
	starterBin = filepath.Join(dir, "starter")
	cmd := exec.Command("go", "build", "-o", starterBin, "./starter")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./starter: %w\n%s", err, out)
	}
	return nil
}

// startWorker starts the real worker and waits until it made its version
// the deployment's current one (a fresh server has none): from then on
// new sessions go to it.
func startWorker(bin, dir string) (stop func(), err error) {
	logf, err := os.Create(filepath.Join(dir, "worker.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-address", hostPort, "-store", storeDir, "-tool-journal", filepath.Join(dir, "journal"), "-log-level", "info")
	cmd.Stdout = logf
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if strings.Contains(sc.Text(), "this one is now current") {
				once.Do(func() { close(ready) })
			}
		}
	}()
	stop = func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
	}
	select {
	case <-ready:
		return stop, nil
	case <-time.After(waitLong):
		stop()
		return nil, fmt.Errorf("worker not ready after %v", waitLong)
	}
}

// term is the starter running in a pty, as a person's terminal runs it.
type term struct {
	t    *testing.T
	pty  *os.File
	cmd  *exec.Cmd
	mu   sync.Mutex
	raw  bytes.Buffer
	done chan struct{}
	code int
}

// starter runs the starter with args in a pty in dir.
func starter(t *testing.T, dir string, args ...string) *term {
	t.Helper()
	cmd := exec.Command(starterBin, append([]string{"-address", hostPort, "-store", storeDir}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "NO_COLOR=")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 60, Cols: 200})
	if err != nil {
		t.Fatalf("start starter in a pty: %v", err)
	}
	tm := &term{t: t, pty: f, cmd: cmd, done: make(chan struct{})}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			tm.mu.Lock()
			tm.raw.Write(buf[:n])
			tm.mu.Unlock()
			if err != nil {
				break
			}
		}
		_ = cmd.Wait()
		tm.code = cmd.ProcessState.ExitCode()
		close(tm.done)
	}()
	t.Cleanup(func() {
		select {
		case <-tm.done:
		default:
			_ = cmd.Process.Kill()
			<-tm.done
		}
		f.Close()
		if t.Failed() || os.Getenv("TERMSESSION_SHOW") != "" {
			t.Logf("terminal of starter %s:\n%s", strings.Join(args, " "), tm.screen())
		}
	})
	return tm
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// screen is what the terminal showed, colors left out.
func (tm *term) screen() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return strings.ReplaceAll(ansi.ReplaceAllString(tm.raw.String(), ""), "\r", "")
}

// rawScreen is what the terminal showed, colors included.
func (tm *term) rawScreen() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.raw.String()
}

// waitFor waits until the terminal shows text (n times, with count).
func (tm *term) waitFor(text string) {
	tm.t.Helper()
	tm.waitForCount(text, 1)
}

func (tm *term) waitForCount(text string, n int) {
	tm.t.Helper()
	deadline := time.Now().Add(waitLong)
	for strings.Count(tm.screen(), text) < n {
		if time.Now().After(deadline) {
			tm.t.Fatalf("the terminal did not show %q (%d times) within %v:\n%s", text, n, waitLong, tm.screen())
		}
		select {
		case <-tm.done:
			if strings.Count(tm.screen(), text) < n {
				tm.t.Fatalf("the starter exited (%d) without showing %q:\n%s", tm.code, text, tm.screen())
			}
		case <-time.After(poll):
		}
	}
}

// typeLine types a line and Enter.
func (tm *term) typeLine(s string) {
	tm.t.Helper()
	if _, err := io.WriteString(tm.pty, s+"\r"); err != nil {
		tm.t.Fatalf("type %q: %v", s, err)
	}
}

// exit waits for the starter to end and returns its exit code.
func (tm *term) exit() int {
	tm.t.Helper()
	select {
	case <-tm.done:
		return tm.code
	case <-time.After(waitLong):
		tm.t.Fatalf("the starter did not end within %v:\n%s", waitLong, tm.screen())
		return -1
	}
}

// after is the screen after the first occurrence of mark.
func after(screen, mark string) string {
	_, rest, _ := strings.Cut(screen, mark)
	return rest
}
