package netbridge

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
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
	ln, err := net.Listen("tcp", args[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: the network proxy's bridge: %v\n", Name, err)
		return 126
	}
	// The worker signals the whole process group: the command decides
	// what SIGTERM means, and the bridge serves it until it exits.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	cmd := exec.Command(args[3], args[4:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil { // the listener is close-on-exec
		fmt.Fprintf(os.Stderr, "%s: %v\n", Name, err)
		return 127
	}
	go serve(ln, args[1])
	return exitCode(cmd.Wait())
}

// exitCode is the process's exit code for the command's end: its own, or
// 128+N when signal N ended it, as bwrap and shells report it.
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", Name, err)
	return 127
}

// serve forwards each connection for the life of the process.
func serve(ln net.Listener, socket string) {
	for {
		c, err := ln.Accept()
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
