package tools

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/durable-agents/agentloop/internal/sandbox"
)

type runResult struct {
	exitCode int
	signal   string // set when the shell died of a signal we did not send
	timedOut bool
	aborted  bool
}

// run starts the command in the sandbox, in its own process group, with
// stdout and stderr on one pipe, feeds the output to out, and ends the
// whole group: on timeout and on ctx cancellation with SIGTERM, then
// SIGKILL after the grace; and with SIGKILL once the shell has exited, so
// background children never outlive the call. Under bwrap the SIGKILL also
// ends the sandbox's pid namespace, which takes even processes that left
// the group with it.
func (t *BashTool) run(ctx context.Context, command string, call Call, timeout time.Duration, out *bashOutput) (runResult, error) {
	sb, err := t.sandbox()
	if err != nil {
		return runResult{}, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return runResult{}, Fault(err)
	}
	req := call.Sandbox
	spec := sandbox.Spec{Shell: t.opts.Shell, Command: command, Dir: call.Workspace, Output: w, Network: req.NetworkOn()}
	if req != nil {
		spec.Env = req.Env
	}
	if dir := t.opts.Outputs.ExistingRunDir(call.Scope); dir != "" {
		// The run's saved outputs, read-only where its notices say.
		spec.ReadOnly = []string{dir}
	}
	proc, err := sb.Start(spec)
	w.Close() // the command holds its own copy
	if err != nil {
		r.Close()
		return runResult{}, err
	}
	if t.started != nil {
		t.started(proc)
	}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 32*1024)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				out.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var res runResult
	select {
	case <-proc.Done():
	case <-timer.C:
		res.timedOut = true
		t.stopGroup(proc)
	case <-ctx.Done():
		res.aborted = true
		t.stopGroup(proc)
	}
	proc.Kill()
	select {
	case <-readDone:
	case <-time.After(bashStdioGrace):
		r.SetReadDeadline(time.Now())
		<-readDone
	}
	r.Close()

	exit, err := proc.Wait()
	if err != nil && (res.timedOut || res.aborted) {
		// Stopped by the timeout or the abort before bwrap reported the
		// command's own exit (a loaded machine can spend the whole
		// timeout in bwrap's set-up): the stop is the outcome.
		return res, nil
	}
	if err != nil {
		return res, err
	}
	if exit.Signal != 0 && !res.timedOut && !res.aborted {
		res.signal = exit.Signal.String()
	} else {
		res.exitCode = exit.Code
	}
	return res, nil
}

// stopGroup sends SIGTERM to the group and SIGKILL when anything in it is
// still alive after the grace, then waits for the shell.
func (t *BashTool) stopGroup(proc *sandbox.Process) {
	syscall.Kill(-proc.Group, syscall.SIGTERM)
	deadline := time.Now().Add(t.opts.KillGrace)
	for time.Now().Before(deadline) {
		select {
		case <-proc.Done():
			if !groupAlive(proc.Group) {
				return // the whole group is gone
			}
		default:
		}
		time.Sleep(10 * time.Millisecond)
	}
	proc.Kill()
	<-proc.Done()
}

// groupAlive reports whether a process of the group is alive. Zombies do not
// count: where PID 1 does not reap orphans they linger, already dead.
func groupAlive(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return syscall.Kill(-pgid, 0) == nil
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		state, group, ok := procStat(e.Name())
		if ok && group == pgid && state != "Z" {
			return true
		}
	}
	return false
}

// procStat reads the state and process group of /proc/<pid>/stat.
func procStat(pid string) (state string, pgid int, ok bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return "", 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(s[i+1:]) // state ppid pgrp ...
	if len(f) < 3 {
		return "", 0, false
	}
	pgid, err = strconv.Atoi(f[2])
	return f[0], pgid, err == nil
}
