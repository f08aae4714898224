package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// auditArch is this architecture's AUDIT_ARCH value; 0 where the filter
// is not supported.
var auditArch = map[string]uint32{
	"amd64": unix.AUDIT_ARCH_X86_64,
	"arm64": unix.AUDIT_ARCH_AARCH64,
}[runtime.GOARCH]

// seccomp_data offsets: the syscall number, the architecture, and the
// low 32 bits of the first three arguments (little-endian).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
	offArg1 = 24
	offArg2 = 32
)

// socketFilter is a seccomp program for the cases where commands share a
// network namespace with the worker (Landlock mode, or network on). It
// allows Unix and internet sockets only: packet sockets (which capture the
// worker's traffic given CAP_NET_RAW), netlink (which lists and, given
// CAP_NET_ADMIN, changes the host's interfaces and routes; glibc's
// resolver does without it) and every other family are refused. Of
// internet sockets it refuses those that Landlock's TCP rules do not
// govern: with network off every AF_INET and AF_INET6 socket, with network
// on all but plain TCP (UDP, raw sockets and MPTCP, which would reach
// loopback untouched). It also refuses io_uring, whose socket operations bypass
// seccomp, and kills processes that use another syscall ABI (x32, or
// 32-bit code on a 64-bit kernel), whose socket calls it cannot see.
// nil where the architecture is not supported.
//
// netlink allows netlink sockets: bwrap configures an empty network
// namespace's loopback over NETLINK_ROUTE, and there netlink sees only the
// sandbox's own loopback.
func socketFilter(network, netlink bool) []unix.SockFilter {
	if auditArch == 0 {
		return nil
	}
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		and  = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
		x32  = 0x40000000
		deny = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
		kill = unix.SECCOMP_RET_KILL_PROCESS
		pass = unix.SECCOMP_RET_ALLOW
	)
	f := []unix.SockFilter{
		stmt(ld, offArch),
		jump(jeq, auditArch, 1, 0),
		stmt(ret, kill),
		stmt(ld, offNr),
		jump(jge, x32, 0, 1),
		stmt(ret, kill),
		jump(jeq, unix.SYS_IO_URING_SETUP, 0, 1),
		stmt(ret, deny),
		jump(jeq, unix.SYS_SOCKET, 1, 0),
		stmt(ret, pass),
		stmt(ld, offArg0), // domain
	}
	if netlink {
		f = append(f,
			jump(jeq, unix.AF_INET, 5, 0),
			jump(jeq, unix.AF_INET6, 4, 0),
			jump(jeq, unix.AF_UNIX, 1, 0),
			jump(jeq, unix.AF_NETLINK, 0, 1))
	} else {
		f = append(f,
			jump(jeq, unix.AF_INET, 4, 0),
			jump(jeq, unix.AF_INET6, 3, 0),
			jump(jeq, unix.AF_UNIX, 0, 1))
	}
	f = append(f,
		stmt(ret, pass),
		stmt(ret, deny)) // packet, netlink (but as above) and every other family
	if !network {
		return append(f, stmt(ret, deny))
	}
	return append(f,
		stmt(ld, offArg1), // type, without SOCK_NONBLOCK and SOCK_CLOEXEC
		stmt(and, 0xf),
		jump(jeq, unix.SOCK_STREAM, 1, 0),
		stmt(ret, deny),
		stmt(ld, offArg2), // protocol
		jump(jeq, 0, 2, 0),
		jump(jeq, unix.IPPROTO_TCP, 1, 0),
		stmt(ret, deny),
		stmt(ret, pass),
	)
}

func stmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func jump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, K: k, Jt: jt, Jf: jf}
}

// installFilter applies the filter to the calling thread only (no
// SECCOMP_FILTER_FLAG_TSYNC): the worker's other threads stay free. The
// thread must have no_new_privs set.
func installFilter(f []unix.SockFilter) error {
	if f == nil {
		return nil
	}
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog))); errno != 0 {
		return fmt.Errorf("sandbox: seccomp: %w", errno)
	}
	return nil
}
