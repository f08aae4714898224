package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// The sandbox's temporary files (a Landlock command's HOME and TMPDIR, the
// mask file bound over hidden paths) are named for the worker's pid:
// agentloop-sandbox-<pid>-.... A worker removes its own as it goes, but one
// that is SIGKILLed (a crash, a deploy past its grace) cannot, and a
// command's HOME can hold whatever it wrote there (an npm cache). So the
// first sandbox a process makes removes the files of processes that no
// longer run.
const tempPrefix = "agentloop-sandbox-"

// tempPattern is the os.MkdirTemp/CreateTemp pattern of this process's
// temporary files of one kind.
func tempPattern(kind string) string {
	return fmt.Sprintf("%s%d-%s-", tempPrefix, os.Getpid(), kind)
}

var sweepOnce sync.Once

// sweepStale removes the temporary files of sandboxes whose process has
// gone, once per process. A pid that runs again (reused) keeps its files
// until a later sweep finds it gone; files of other users' live processes
// (EPERM) are left alone.
func sweepStale() {
	sweepOnce.Do(func() { removeStale(os.TempDir()) })
}

func removeStale(dir string) {
	paths, _ := filepath.Glob(filepath.Join(dir, tempPrefix+"*"))
	for _, p := range paths {
		if pid, ok := ownerPID(filepath.Base(p)); ok && !running(pid) {
			os.RemoveAll(p)
		}
	}
}

// ownerPID reads the pid out of a temporary file's name.
func ownerPID(name string) (int, bool) {
	rest := strings.TrimPrefix(name, tempPrefix)
	digits, _, found := strings.Cut(rest, "-")
	if !found {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	return pid, err == nil && pid > 0
}

func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// removeOffThread removes path from a goroutine of its own. A Landlock
// command's temporary directory is removed when the command ends, on the
// thread that started it; that thread is under the command's Landlock
// rules, which do not let it remove the directory itself. A new goroutine
// runs on another thread (the locked one runs only its own goroutine), and
// the runtime starts new threads from a clean template thread, not from a
// locked one.
func removeOffThread(path string) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		os.RemoveAll(path)
	}()
	<-done
}
