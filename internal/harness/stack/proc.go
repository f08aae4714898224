package stack

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// proc is one process of the stack. Its pid is also in a pid file, so that
// `stack down` in another process can stop what `stack up` started.
type proc struct {
	name    string
	pidFile string
	pid     int
	// done is closed when the process has exited; nil when this process
	// did not start it (then liveness is polled).
	done chan struct{}
}

// startProc starts cmd in a process group of its own (a Ctrl-C in the
// terminal of `stack up` or of a test does not reach it), logging to
// logPath, and writes its pid file.
func startProc(name string, cmd *exec.Cmd, logPath, pidFile string) (*proc, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, pidFile: pidFile, pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(p.pid)+"\n"), 0o644); err != nil {
		p.signal(syscall.SIGKILL)
		return nil, err
	}
	return p, nil
}

// readProc returns the process a pid file names, or nil when there is
// none or it has exited.
func readProc(name, pidFile string) *proc {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return nil
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return nil
	}
	p := &proc{name: name, pidFile: pidFile, pid: pid}
	if !p.alive() {
		return nil
	}
	return p
}

func (p *proc) alive() bool {
	if p.done != nil {
		select {
		case <-p.done:
			return false
		default:
			return true
		}
	}
	// A process started by another: signal 0 tells whether it exists; a
	// zombie (exited, not yet reaped) counts as gone.
	if syscall.Kill(p.pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

func (p *proc) signal(sig syscall.Signal) { _ = syscall.Kill(p.pid, sig) }

// stop sends sig and waits up to grace for the process to exit, then
// kills it. It removes the pid file.
func (p *proc) stop(sig syscall.Signal, grace time.Duration) error {
	defer os.Remove(p.pidFile)
	if !p.alive() {
		return nil
	}
	p.signal(sig)
	if p.wait(grace) {
		return nil
	}
	p.signal(syscall.SIGKILL)
	if p.wait(10 * time.Second) {
		return fmt.Errorf("%s (pid %d) did not stop within %v of %v: killed", p.name, p.pid, grace, sig)
	}
	return fmt.Errorf("%s (pid %d) survived SIGKILL", p.name, p.pid)
}

// wait waits up to d for the process to exit.
func (p *proc) wait(d time.Duration) bool {
	if p.done != nil {
		select {
		case <-p.done:
			return true
		case <-time.After(d):
			return false
		}
	}
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !p.alive() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// runAs makes cmd run as the PostgreSQL system user when this process is
// root: PostgreSQL refuses to run as root. The user's name is $POSTGRES_USER_NAME,
// else "postgres" (Debian's package creates it).
func runAs(cmd *exec.Cmd) (uid, gid int, err error) {
	if os.Geteuid() != 0 {
		return os.Geteuid(), os.Getegid(), nil
	}
	name := os.Getenv("POSTGRES_USER_NAME")
	if name == "" {
		name = "postgres"
	}
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, fmt.Errorf("PostgreSQL cannot run as root and there is no user %q to run it as: %w", name, err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	return uid, gid, nil
}

// reachable checks that the PostgreSQL user can reach dir when this
// process is root and runs PostgreSQL as that user: every parent must be
// searchable by others (os.MkdirTemp and t.TempDir make 0700 ones, and
// /root is one). dir itself is made so.
func reachable(dir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	for d := filepath.Dir(dir); d != "/" && d != "."; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return err
		}
		if st.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("PostgreSQL runs as its own user and cannot reach %s: %s is not searchable by others (chmod o+x it, or put the stack elsewhere)", dir, d)
		}
	}
	return nil
}
