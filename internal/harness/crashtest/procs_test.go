package crashtest_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/stretchr/testify/require"
)

// proc is a worker process.
type proc struct {
	name string
	cmd  *exec.Cmd
	once sync.Once
	done chan struct{}
}

// startWorker starts a worker process and waits until it polls.
func (e *env) startWorker(name string, args ...string) *proc {
	e.t.Helper()
	args = append([]string{"-address", e.hostPort, "-queue", e.queue, "-dir", e.dir, "-v"}, args...)
	logf, err := os.Create(filepath.Join(e.dir, "worker-"+name+".log"))
	require.NoError(e.t, err)
	cmd := exec.Command(workerBin, args...)
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	require.NoError(e.t, err)
	require.NoError(e.t, cmd.Start())
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		signalled := false
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if !signalled && strings.HasPrefix(sc.Text(), "ready") {
				close(ready)
				signalled = true
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	e.t.Cleanup(p.kill)
	select {
	case <-ready:
	case <-p.done:
		e.t.Fatalf("worker %s exited before it was ready", name)
	case <-time.After(reachTimeout):
		e.t.Fatalf("worker %s not ready after %v", name, reachTimeout)
	}
	e.logf("worker %s started (pid %d) %s", name, p.pid(), strings.Join(args[6:], " "))
	return p
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// wrote reports whether a tool log line ("start pid=N call=..." and the
// like) came from this worker.
func (p *proc) wrote(line string) bool { return strings.Contains(line, "pid="+itoa(p.pid())+" ") }

// kill sends SIGKILL and waits for the process to go.
func (p *proc) kill() {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	})
}

func (p *proc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// killWorker kills a worker, logs it and returns when the worker was gone.
func (e *env) killWorker(p *proc, why string) time.Time {
	e.t.Helper()
	p.kill()
	killed := time.Now()
	e.logf("SIGKILL worker %s (pid %d): %s", p.name, p.pid(), why)
	return killed
}
