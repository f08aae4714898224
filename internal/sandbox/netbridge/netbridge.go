package netbridge

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Name is the bridge's program name; a binary run under it is the bridge.
const Name = "agentloop-netbridge"

func init() {
	if len(os.Args) > 0 && filepath.Base(os.Args[0]) == Name {
		os.Exit(Main(os.Args[1:]))
	}
}

// Main runs `LISTEN SOCKET -- COMMAND ARGS...`: it listens on the TCP
// address LISTEN, starts COMMAND, forwards every connection to the Unix
// socket SOCKET, and exits as the command did (128+N when signal N ended
// it, as bwrap and shells report it).
//
// It sits on a network-on call's path (where the worker cannot make the
// listener itself, netns.go), so it does the least it can before the
// command runs: the listening socket by plain system calls (the net
// package's listen first probes the kernel's IPv4 and IPv6 support with
// sockets of its own), the command by fork and exec (os/exec first forks
// a child to probe for pidfd support), and only then the forwarding. A
// connection that comes before the bridge accepts waits in the socket's
// backlog.
//
// With Lifeline as its first argument it is the guard of a process that
// dies with the worker instead (guard).
func Main(args []string) int {
	if len(args) > 0 && args[0] == Lifeline {
		return guard(args)
	}
	if len(args) < 4 || args[2] != "--" {
		fmt.Fprintln(os.Stderr, Name+": usage: "+Name+" LISTEN SOCKET -- COMMAND [ARGS...]")
		return 127
	}
	fd, err := Listen(args[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: the network proxy's bridge: %v\n", Name, err)
		return 126
	}
	// The worker signals the whole process group: the command decides
	// what SIGTERM means, and the bridge serves it until it exits.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	pid, err := start(args[3:], nil) // the listener is close-on-exec
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", Name, err)
		return 127
	}
	ln, err := net.FileListener(os.NewFile(uintptr(fd), "bridge"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: the network proxy's bridge: %v\n", Name, err)
	} else {
		go Serve(ln, args[1])
	}
	code, _ := wait(pid)
	return code
}

// Listen opens a listening TCP socket on addr, an IPv4 address and port,
// close-on-exec; the address need not be up yet (IP_FREEBIND: the worker
// makes it in a namespace whose loopback bwrap has yet to bring up).
func Listen(addr string) (int, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Is4() {
		return -1, fmt.Errorf("listen address %q: want IPv4 address:port", addr)
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	err = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	if err == nil {
		err = syscall.SetsockoptInt(fd, syscall.IPPROTO_IP, syscall.IP_FREEBIND, 1)
	}
	if err == nil {
		err = syscall.Bind(fd, &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()})
		if err == nil {
			err = syscall.Listen(fd, syscall.SOMAXCONN)
		}
	}
	if err != nil {
		syscall.Close(fd)
		return -1, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return fd, nil
}

// start forks and executes argv with the process's standard streams and
// environment, and extra as descriptors 3 and up.
func start(argv []string, extra []uintptr) (int, error) {
	path, err := lookPath(argv[0])
	if err != nil {
		return 0, err
	}
	files := append([]uintptr{0, 1, 2}, extra...)
	return syscall.ForkExec(path, argv, &syscall.ProcAttr{Env: os.Environ(), Files: files})
}

// lookPath finds a program named without a slash on PATH.
func lookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	return exec.LookPath(name)
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
			fmt.Fprintf(os.Stderr, "%s: %v\n", Name, err)
			return 127, 0
		}
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal()), ws.Signal()
	}
	return ws.ExitStatus(), 0
}

// Serve forwards each connection to the Unix socket until the listener
// is closed.
func Serve(ln net.Listener, socket string) {
	for {
		c, err := ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			time.Sleep(10 * time.Millisecond) // out of descriptors: wait, as net/http does
			continue
		}
		go forward(c, socket)
	}
}

// forward copies one connection both ways; when the proxy's side ends,
// the connection ends.
func forward(c net.Conn, socket string) {
	defer c.Close()
	up, err := net.Dial("unix", socket)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: the worker's proxy: %v\n", Name, err)
		return
	}
	defer up.Close()
	go func() {
		io.Copy(up, c)
		up.(*net.UnixConn).CloseWrite()
	}()
	io.Copy(c, up)
}
