package netbridge

import (
	"os"
	"os/signal"
	"syscall"
)

// Lifeline is the option that makes the binary a guard rather than a
// bridge: `-lifeline FD group|namespace [-pass] -- COMMAND ARGS...`.
const Lifeline = "-lifeline"

// guard starts COMMAND and kills it, and all it started, once the worker
// is gone. FD is the read end of a pipe whose write end only the worker
// holds (sandbox's lifeline): a read returns end-of-file the moment the
// worker dies, however it dies, and at once when it died before the guard
// even started. The kernel's parent-death signal is no such guarantee:
// it fires on the death of the worker's thread that started the process,
// bwrap sets it only part of the way through its set-up (and its pid 1
// waits forever for a monitor that died before letting it run), and the
// kernel sends it with that thread's credentials, which under the
// Landlock fallback have no right to signal another user's process.
//
// "group" kills the guard's process group (the guard leads the group the
// worker made; bwrap's pid 1 is in it until bwrap's --new-session);
// "namespace" kills every process of the sandbox's pid namespace but its
// init, which then exits as its last child did, taking the namespace with
// it. -pass hands descriptors 3 to FD on to COMMAND (bwrap's status and
// block descriptors, and the lifeline for the guard inside); without it
// COMMAND gets 0-2 only.
func guard(args []string) int {
	pass := len(args) > 3 && args[3] == "-pass"
	if pass {
		args = append(args[:3:3], args[4:]...)
	}
	if len(args) < 5 || args[0] != Lifeline || args[3] != "--" || (args[2] != "group" && args[2] != "namespace") {
		complain("usage: " + Name + " " + Lifeline + " FD group|namespace [-pass] -- COMMAND [ARGS...]")
		return 127
	}
	fd, ok := atoi(args[1])
	if !ok || fd < 3 {
		complain("the lifeline " + args[1] + " is not a descriptor above 2")
		return 127
	}
	syscall.CloseOnExec(fd)
	go func() {
		var b [1]byte
		for {
			// Nothing is ever written: the read ends with the worker.
			if _, err := syscall.Read(fd, b[:]); err != syscall.EINTR {
				break
			}
		}
		if args[2] == "namespace" {
			syscall.Kill(-1, syscall.SIGKILL) // all but the namespace's init and the guard
			os.Exit(128 + int(syscall.SIGKILL))
		}
		syscall.Kill(0, syscall.SIGKILL) // the guard's own group, the guard with it
	}()
	// The worker signals the whole process group: the command decides
	// what SIGTERM means, and the guard lives until it exits.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	var extra []uintptr
	for i := 3; pass && i <= fd; i++ {
		extra = append(extra, uintptr(i)) // the command's descriptor i
	}
	pid, err := start(args[4:], extra)
	if err != nil {
		complain(args[4] + ": " + err.Error())
		return 127
	}
	for i := 3; pass && i < fd; i++ {
		syscall.Close(i) // the command's now; the guard keeps the lifeline alone
	}
	code, sig := wait(pid)
	if sig != 0 {
		// End as the command did, so that the worker sees its signal.
		signal.Reset()
		syscall.Kill(os.Getpid(), sig)
	}
	return code
}

// start forks and executes argv with the process's standard streams and
// environment, and extra as descriptors 3 and up.
func start(argv []string, extra []uintptr) (int, error) {
	path, err := lookPath(argv[0])
	if err != nil {
		return 0, err
	}
	files := append([]uintptr{0, 1, 2}, extra...)
	return syscall.ForkExec(path, argv, &syscall.ProcAttr{Env: syscall.Environ(), Files: files})
}

// wait waits for pid and returns the exit code for its end: its own, or
// 128+N when signal N ended it, as bwrap and shells report it; and the
// signal.
func wait(pid int) (int, syscall.Signal) {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err == nil {
			break
		}
		if err != syscall.EINTR {
			complain("wait: " + err.Error())
			return 127, 0
		}
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal()), ws.Signal()
	}
	return ws.ExitStatus(), 0
}
