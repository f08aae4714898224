package tools

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type runResult struct {
	exitCode int
	signal   string // set when the shell died of a signal we did not send
	timedOut bool
	aborted  bool
}

// run starts the command in its own process group with stdout and stderr on
// one pipe, feeds the output to out, and ends the whole group: on timeout
// and on ctx cancellation with SIGTERM, then SIGKILL after the grace; and
// with SIGKILL once the shell has exited, so background children never
// outlive the call.
func (t *BashTool) run(ctx context.Context, command, dir string, timeout time.Duration, out *bashOutput) (runResult, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return runResult{}, Fault(err)
	}
	cmd := exec.Command(t.opts.Shell, "-c", command)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	w.Close() // the child holds its own copy
	if err != nil {
		r.Close()
		return runResult{}, err
	}
	pgid := cmd.Process.Pid
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
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var res runResult
	var waitErr error
	select {
	case waitErr = <-waited:
	case <-timer.C:
		res.timedOut = true
		waitErr = t.stopGroup(pgid, waited)
	case <-ctx.Done():
		res.aborted = true
		waitErr = t.stopGroup(pgid, waited)
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	select {
	case <-readDone:
	case <-time.After(bashStdioGrace):
		r.SetReadDeadline(time.Now())
		<-readDone
	}
	r.Close()

	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return res, waitErr
	}
	status := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case status.Signaled() && !res.timedOut && !res.aborted:
		res.signal = status.Signal().String()
	default:
		res.exitCode = cmd.ProcessState.ExitCode()
	}
	return res, nil
}

// stopGroup sends SIGTERM to the group and SIGKILL when anything in it is
// still alive after the grace, then waits for the shell.
func (t *BashTool) stopGroup(pgid int, waited <-chan error) error {
	syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.Now().Add(t.opts.KillGrace)
	var waitErr error
	exited := false
	for time.Now().Before(deadline) {
		if !exited {
			select {
			case waitErr = <-waited:
				exited = true
			default:
			}
		}
		if exited && !groupAlive(pgid) {
			return waitErr // the whole group is gone
		}
		time.Sleep(10 * time.Millisecond)
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	if exited {
		return waitErr
	}
	return <-waited
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
