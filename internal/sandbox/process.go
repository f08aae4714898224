package sandbox

import (
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// startPlain runs the command as the worker's child in its own process
// group, with the worker's environment: Mode None, pi's behaviour.
func startPlain(p *Process, spec Spec) (func() (Exit, error), error) {
	cmd := exec.Command(spec.Shell, "-c", spec.Command)
	cmd.Dir = spec.Dir
	cmd.Stdout, cmd.Stderr = spec.Output, spec.Output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p.Group = cmd.Process.Pid
	return func() (Exit, error) { return exitOf(cmd, cmd.Wait()) }, nil
}

// exitOf turns cmd.Wait's result into an Exit.
func exitOf(cmd *exec.Cmd, waitErr error) (Exit, error) {
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return Exit{}, waitErr
	}
	status := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if status.Signaled() {
		return Exit{Signal: status.Signal()}, nil
	}
	return Exit{Code: status.ExitStatus()}, nil
}

// rlimit is one resource limit to set.
type rlimit struct {
	resource   int
	flag       string // prlimit(1)'s option
	soft, hard uint64
}

// rlimits are the limits to set, each no higher than the worker's own
// hard limit, which an unprivileged process cannot raise. The CPU limit's
// hard value comes a second after its soft one, so that a process gets
// SIGXCPU ("CPU time limit exceeded") before SIGKILL.
func (l Limits) rlimits() []rlimit {
	cpu := max(uint64(l.CPU.Seconds()), 1)
	list := []rlimit{
		{unix.RLIMIT_NPROC, "--nproc", l.Procs, l.Procs},
		{unix.RLIMIT_DATA, "--data", l.Memory, l.Memory},
		{unix.RLIMIT_CPU, "--cpu", cpu, cpu + 1},
		{unix.RLIMIT_FSIZE, "--fsize", l.FileSize, l.FileSize},
		{unix.RLIMIT_NOFILE, "--nofile", l.OpenFiles, l.OpenFiles},
	}
	for i, r := range list {
		var own unix.Rlimit
		if unix.Getrlimit(r.resource, &own) == nil {
			list[i].soft, list[i].hard = min(r.soft, own.Max), min(r.hard, own.Max)
		}
	}
	return list
}

// setLimits sets the limits on a process that has not yet run anything
// of the command's.
func (l Limits) setLimits(pid int) error {
	for _, r := range l.rlimits() {
		lim := unix.Rlimit{Cur: r.soft, Max: r.hard}
		if err := unix.Prlimit(pid, r.resource, &lim, nil); err != nil {
			return fmt.Errorf("sandbox: set the %s limit: %w", r.flag[2:], err)
		}
	}
	return nil
}

// prlimitArgs are prlimit(1)'s options for the limits.
func (l Limits) prlimitArgs() []string {
	var args []string
	for _, r := range l.rlimits() {
		args = append(args, r.flag+"="+strconv.FormatUint(r.soft, 10)+":"+strconv.FormatUint(r.hard, 10))
	}
	return args
}
