package sandbox

import (
	"errors"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
)

// Exit is how a command ended.
type Exit struct {
	Code int
	// Signal is set when the shell died of a signal. Under bwrap, which
	// reports such a death as 128+n, Code holds that number instead.
	Signal syscall.Signal
}

// Process is a started command.
type Process struct {
	// Group is the process group of the command and everything it starts
	// (unless they call setsid): signal it to stop the command.
	Group int
	// monitor is bwrap's own process, outside the group.
	monitor int
	// init is the sandbox's pid 1 (bwrap): see Wait.
	init     *os.Process
	reapOnce sync.Once
	done     chan struct{}
	exit     Exit
	err      error
}

// Done is closed once the command's shell has exited; what it started may
// live on until Kill.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the command and returns how it ended. An error means it
// never started (the sandbox failed; its message is in the output).
//
// Under bwrap it also reaps the sandbox's pid 1 when the worker has become
// its parent: bwrap's monitor exits with the shell, and the orphaned pid 1
// goes to the machine's init, which is the worker itself in a container
// started without --init. The handle is a pidfd, so a reused pid is never
// mistaken for it; when pid 1 is not the worker's child, Wait returns at
// once.
func (p *Process) Wait() (Exit, error) {
	<-p.done
	p.reapOnce.Do(func() {
		if p.init != nil {
			p.init.Wait()
			p.init.Release()
		}
	})
	return p.exit, p.err
}

// Kill sends SIGKILL to the command's process group. Under bwrap that
// group holds the sandbox's pid 1, whose death takes down every process of
// the namespace, including those that left the group; bwrap itself is
// killed too should it still run.
func (p *Process) Kill() {
	syscall.Kill(-p.Group, syscall.SIGKILL)
	select {
	case <-p.done:
	default:
		if p.monitor != 0 {
			syscall.Kill(p.monitor, syscall.SIGKILL)
		}
	}
}

// startPlain runs the command as the worker's child in its own process
// group, with the worker's environment (and the run's additions): Mode
// None, pi's behaviour.
func startPlain(p *Process, spec Spec) (func() (Exit, error), error) {
	argv := spec.argv()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = spec.Dir
	if len(spec.Env) > 0 {
		cmd.Env = os.Environ()
		for _, k := range slices.Sorted(maps.Keys(spec.Env)) {
			cmd.Env = append(cmd.Env, k+"="+spec.Env[k]) // the last one wins
		}
	}
	spec.connect(cmd)
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
