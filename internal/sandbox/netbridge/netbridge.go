package netbridge

import (
	"os"
	"syscall"
)

// Name is the bridge's program name; a binary run under it is the bridge.
const Name = "agentloop-netbridge"

// Send is the option that names the socket the listener goes to; Unset
// names a variable the command must not get.
const (
	Send  = "-send"
	Unset = "-unset"
)

func init() {
	if len(os.Args) > 0 && base(os.Args[0]) == Name {
		os.Exit(Main(os.Args[1:]))
	}
}

// Main runs `-send FD PORT [-unset NAME] -- COMMAND ARGS...`: it listens
// on 127.0.0.1:PORT, sends the listening socket over the Unix socket FD,
// closes both, and executes COMMAND in its own place, which then holds
// the descriptors the bridge was started with but FD, and its environment
// without NAME (a variable set for the bridge alone: GOMAXPROCS=1, so that
// the Go runtime starts no threads that the exec then has to end, which
// on a busy machine costs more than the rest of the bridge). It returns
// only when that fails: 126 when the listener could not be made or sent,
// 127 when COMMAND could not be executed, as shells report it.
//
// With Lifeline as its first argument it is the guard of a process that
// dies with the worker instead (guard).
func Main(args []string) int {
	if len(args) > 0 && args[0] == Lifeline {
		return guard(args)
	}
	var unset string
	if len(args) > 5 && args[3] == Unset {
		unset, args = args[4], append(args[:3:3], args[5:]...)
	}
	if len(args) < 5 || args[0] != Send || args[3] != "--" {
		complain("usage: " + Name + " " + Send + " FD PORT [" + Unset + " NAME] -- COMMAND [ARGS...]")
		return 127
	}
	sock, ok := atoi(args[1])
	port, ok2 := atoi(args[2])
	if !ok || !ok2 || sock < 3 {
		complain("the descriptor " + args[1] + " or the port " + args[2] + " is not a number (a descriptor above 2)")
		return 127
	}
	fd, err := Listen(port)
	if err == nil {
		// One byte carries the descriptor; the worker waits for it.
		err = syscall.Sendmsg(sock, []byte{0}, syscall.UnixRights(fd), nil, 0)
		syscall.Close(fd)
		if err != nil {
			err = os.NewSyscallError("sendmsg", err)
		}
	}
	syscall.Close(sock) // not the command's
	if err != nil {
		complain("the network proxy's bridge: " + err.Error())
		return 126
	}
	if unset != "" {
		syscall.Unsetenv(unset)
	}
	err = execvp(args[4:])
	complain(args[4] + ": " + err.Error())
	return 127
}

// Listen opens a listening TCP socket on 127.0.0.1:port, close-on-exec;
// the address need not be up yet (IP_FREEBIND: a root worker makes it in
// a namespace whose loopback bwrap has yet to bring up).
func Listen(port int) (int, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	err = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	if err == nil {
		err = syscall.SetsockoptInt(fd, syscall.IPPROTO_IP, syscall.IP_FREEBIND, 1)
	}
	if err == nil {
		err = syscall.Bind(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
		if err == nil {
			err = syscall.Listen(fd, syscall.SOMAXCONN)
		}
	}
	if err != nil {
		syscall.Close(fd)
		return -1, os.NewSyscallError("listen on 127.0.0.1", err)
	}
	return fd, nil
}

// execvp executes argv in place of the bridge, with its environment,
// finding a program named without a slash on PATH as a shell would: the
// first entry that can be executed; not found, unless one was found but
// could not be executed.
func execvp(argv []string) error {
	env := syscall.Environ()
	if containsSlash(argv[0]) {
		return syscall.Exec(argv[0], argv, env)
	}
	var denied error
	for _, path := range onPath(argv[0]) {
		err := syscall.Exec(path, argv, env)
		switch err {
		case syscall.ENOENT, syscall.ENOTDIR, syscall.ELOOP, syscall.ENAMETOOLONG:
		case syscall.EACCES:
			denied = err
		default:
			return err
		}
	}
	if denied != nil {
		return denied
	}
	return syscall.ENOENT
}

// lookPath finds the program a command names: itself when the name holds
// a slash, else the first regular file on PATH that someone may execute.
func lookPath(name string) (string, error) {
	if containsSlash(name) {
		return name, nil
	}
	for _, path := range onPath(name) {
		var st syscall.Stat_t
		if syscall.Stat(path, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Mode&0o111 != 0 {
			return path, nil
		}
	}
	return "", syscall.ENOENT
}

// onPath lists where a program named without a slash may be, in PATH's
// order. Relative entries (an empty one is the working directory) are
// left out, as os/exec leaves them out (exec.ErrDot).
func onPath(name string) []string {
	path, ok := syscall.Getenv("PATH")
	if !ok {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	var paths []string
	for start := 0; start <= len(path); {
		end := start
		for end < len(path) && path[end] != ':' {
			end++
		}
		if dir := path[start:end]; dir != "" && dir[0] == '/' {
			paths = append(paths, dir+"/"+name)
		}
		start = end + 1
	}
	return paths
}

func containsSlash(s string) bool { return base(s) != s }

// base is what follows the path's last slash.
func base(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[i+1:]
		}
	}
	return path
}

// atoi reads a non-negative decimal number.
func atoi(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// complain writes the bridge's message to standard error, which is the
// command's output.
func complain(msg string) {
	syscall.Write(2, []byte(Name+": "+msg+"\n"))
}
