package sandbox

import (
	"errors"
	"fmt"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// How the limits of a command of another user (Config.RunAs, a root
// worker's DefaultUser) are set under bwrap.
const (
	// limitsDirect: prlimit(2) on the sandbox's pid 1 while bwrap holds
	// it, which for another user's process needs CAP_SYS_RESOURCE.
	limitsDirect = iota
	// limitsAsUser: the same, from the starting thread while it has that
	// user's ids (setLimitsAs), for a worker without CAP_SYS_RESOURCE.
	limitsAsUser
	// limitsInside: prlimit(1) in the sandbox sets them before the
	// command: one exec more per call, for a worker that can do neither.
	limitsInside
)

// secbitNoSetuidFixup keeps a thread's capabilities across a change of
// its uids (capabilities(7), SECBIT_NO_SETUID_FIXUP).
const secbitNoSetuidFixup = 1 << 2

// asUser serialises setLimitsAs: the process's dumpable flag, which every
// change of a thread's ids resets, is read before and put back after.
var asUser sync.Mutex

// setLimitsAs sets the limits on pid, a process of u, from the calling
// thread, which takes u's real, effective and saved ids for as long as
// that takes: prlimit(2) needs no capability when the caller's ids are
// the target's. The caller has locked the goroutine to the thread and
// never unlocks it, as the thread's securebits stay set.
//
// The thread keeps its capabilities meanwhile (SECBIT_NO_SETUID_FIXUP),
// which is how it takes root's ids back, and why no process of u may
// ptrace it (ptrace wants the tracer to hold every capability of the
// tracee). The ids are changed by raw system calls, for this thread
// alone: Go's Setresuid would change every thread of the worker. While
// it holds u's ids (microseconds), a process of u could signal this
// thread (tgkill), and a SIGKILL or SIGSTOP acts on the whole worker: a
// denial of service open to other processes of u on the host, none to the
// sandbox's own, which live in pid namespaces of their own. With
// -sandbox-user naming a host account that runs other processes, give the
// worker CAP_SYS_RESOURCE (limitsDirect) to close it.
func setLimitsAs(l Limits, pid int, u *syscall.Credential) error {
	asUser.Lock()
	defer asUser.Unlock()
	dumpable, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	if err != nil {
		return fmt.Errorf("sandbox: PR_GET_DUMPABLE: %w", err)
	}
	bits, err := unix.PrctlRetInt(unix.PR_GET_SECUREBITS, 0, 0, 0, 0)
	if err != nil {
		return fmt.Errorf("sandbox: PR_GET_SECUREBITS: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(bits|secbitNoSetuidFixup), 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: keeping capabilities across the limits' change of ids: %w", err)
	}
	// The thread's own ids, which it takes back: root's for a root
	// worker, the worker's for one that holds CAP_SETUID and CAP_SETGID
	// without CAP_SYS_RESOURCE.
	var own ids
	own.ruid, own.euid, own.suid = unix.Getresuid()
	own.rgid, own.egid, own.sgid = unix.Getresgid()
	uid, gid := int(u.Uid), int(u.Gid)
	err = setIDs(ids{uid, uid, uid, gid, gid, gid}, false)
	if err == nil {
		err = l.setLimits(pid)
	}
	if back := setIDs(own, true); back != nil {
		// The thread ends with its goroutine; it must do nothing more.
		return fmt.Errorf("sandbox: taking the worker's ids back after setting the limits: %w", errors.Join(err, back))
	}
	unix.Prctl(unix.PR_SET_DUMPABLE, uintptr(dumpable), 0, 0, 0)
	return err
}

// setLimits sets the limits of a command held by bwrap, pid its pid 1.
func (s *Sandbox) setLimits(pid int) error {
	if s.limitsBy == limitsAsUser {
		return setLimitsAs(s.cfg.Limits, pid, s.runAs)
	}
	return s.cfg.Limits.setLimits(pid)
}

// ids are a thread's real, effective and saved uids and gids.
type ids struct {
	ruid, euid, suid int
	rgid, egid, sgid int
}

// setIDs sets the calling thread's ids: the gids first when it leaves its
// own for the command user's, the uids first when it takes its own back,
// so that the change of gids is made with the worker's uid (the order
// that works whether or not the capabilities follow the uid).
func setIDs(to ids, back bool) error {
	setUIDs := func() error {
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(to.ruid), uintptr(to.euid), uintptr(to.suid)); e != 0 {
			return e
		}
		return nil
	}
	if back {
		if err := setUIDs(); err != nil {
			return err
		}
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(to.rgid), uintptr(to.egid), uintptr(to.sgid)); e != 0 {
		return e
	}
	if !back {
		return setUIDs()
	}
	return nil
}
