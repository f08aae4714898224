package fleettest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Host is one worker host: a process of the worker binary with its own
// flags, environment and log file. It can be stopped and started again
// (the same host restarting) or killed for good.
type Host struct {
	// ID is the host's identity (its -host-id, when Args give one).
	ID string
	// Bin is the worker binary, Args its flags, Env its whole environment.
	Bin  string
	Args []string
	Env  []string
	// LogPath receives the worker's output, appended across restarts.
	LogPath string

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	starts int
}

// Start starts the host's worker process.
func (h *Host) Start() error {
	log, err := os.OpenFile(h.LogPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "==== fleettest: host %s starting at %s\n", h.ID, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(h.Bin, h.Args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = h.Env
	if err := cmd.Start(); err != nil {
		log.Close()
		return err
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(done)
	}()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cmd, h.done = cmd, done
	h.starts++
	return nil
}

// Stop sends sig to the worker and waits for it to exit: a SIGTERM'd
// worker gets grace to finish (then SIGKILL), as an orchestrator gives it.
// It returns the process id and how long it took to go.
func (h *Host) Stop(sig syscall.Signal, grace time.Duration) (pid int, took time.Duration) {
	h.mu.Lock()
	cmd, done := h.cmd, h.done
	h.mu.Unlock()
	if cmd == nil {
		return 0, 0
	}
	start := time.Now()
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-done
	}
	return cmd.Process.Pid, time.Since(start)
}

// Kill removes the host as a lost machine goes: SIGKILL, nothing finishes.
func (h *Host) Kill() { h.Stop(syscall.SIGKILL, time.Minute) }

// Exited reports whether the worker's latest process has exited.
func (h *Host) Exited() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done == nil {
		return false
	}
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}

// Starts counts the host's starts.
func (h *Host) Starts() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.starts
}

// Pid is the process id of the host's latest worker process, 0 before its
// first start.
func (h *Host) Pid() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cmd == nil {
		return 0
	}
	return h.cmd.Process.Pid
}

// Log is what the host's worker wrote so far.
func (h *Host) Log() string {
	b, _ := os.ReadFile(h.LogPath)
	return string(b)
}

// BuildWorker builds the real worker binary (./worker of this module) into
// dir and returns its path.
func BuildWorker(ctx context.Context, dir string) (string, error) {
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	bin := filepath.Join(dir, "worker")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./worker")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./worker: %w\n%s", err, out)
	}
	return bin, nil
}

const sigterm = syscall.SIGTERM
