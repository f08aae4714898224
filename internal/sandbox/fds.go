package sandbox

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// CloseInheritedOnExec marks every descriptor above 2 close-on-exec. A
// worker may be started with descriptors its launcher left open (a shell's
// `9</secret`, a supervisor's sockets); Go's exec passes every descriptor
// not marked so to the child, and bwrap passes them on to the command, so
// without this every command and MCP server would get them. The worker
// calls it first thing: the descriptors Go opens itself are close-on-exec
// already, so afterwards children get 0-2 and what is handed to them
// explicitly (cmd.ExtraFiles).
func CloseInheritedOnExec() error {
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	// Before Linux 5.11 (or under a seccomp filter that refuses it): one
	// descriptor at a time.
	entries, rerr := os.ReadDir("/proc/self/fd")
	if rerr != nil {
		return errors.Join(err, rerr)
	}
	for _, e := range entries {
		fd, cerr := strconv.Atoi(e.Name())
		if cerr != nil || fd <= 2 {
			continue
		}
		// The directory's own descriptor is among them; it is closed on
		// return, and marking it first is harmless.
		if _, ferr := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); ferr != nil && ferr != unix.EBADF {
			return ferr
		}
	}
	return nil
}
