//go:build !cgo

package main

import "github.com/durable-agents/agentloop/internal/sandbox/netbridge"

// The texts start_linux_amd64.s writes when a well-formed -send call
// fails; they are data the linker lays out, so the assembly can use them
// before the Go runtime has started. They match what netbridge.Main
// writes for the same failures (syscall.Errno's texts).
var (
	bridgeFailed = netbridge.Name + ": the network proxy's bridge: "
	socketFailed = "socket: "
	listenFailed = "listen on 127.0.0.1: "
	sendFailed   = "sendmsg: "
	execFailed   = netbridge.Name + ": "
	colon        = ": "
	newline      = "\n"
	errnoPrefix  = "errno "
)

// errnoTexts bounds errnoText; errors above it are written as "errno N".
const errnoTexts = 112

var errnoText = [errnoTexts]string{
	1:   "operation not permitted",
	2:   "no such file or directory",
	4:   "interrupted system call",
	5:   "input/output error",
	7:   "argument list too long",
	8:   "exec format error",
	9:   "bad file descriptor",
	11:  "resource temporarily unavailable",
	12:  "cannot allocate memory",
	13:  "permission denied",
	14:  "bad address",
	20:  "not a directory",
	21:  "is a directory",
	22:  "invalid argument",
	23:  "too many open files in system",
	24:  "too many open files",
	26:  "text file busy",
	32:  "broken pipe",
	36:  "file name too long",
	40:  "too many levels of symbolic links",
	88:  "socket operation on non-socket",
	93:  "protocol not supported",
	97:  "address family not supported by protocol",
	98:  "address already in use",
	99:  "cannot assign requested address",
	104: "connection reset by peer",
	105: "no buffer space available",
	107: "transport endpoint is not connected",
	111: "connection refused",
}
