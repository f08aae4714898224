package sandbox

import "golang.org/x/sys/unix"

// listenFilter is a second seccomp program for network-on commands under
// Landlock, which share the worker's network namespace: it refuses
// listen(2), accept(2) and accept4(2). Landlock governs bind(2) but not
// listen(2), and listen on an unbound socket binds it to a port of every
// address of the host, where anyone could connect to the command past the
// proxy. Unix sockets cannot listen either (seccomp does not see a
// socket's family at listen). The kernel applies every filter a thread
// has; socketFilter's kills processes of another syscall ABI first.
func listenFilter() []unix.SockFilter {
	if auditArch == 0 {
		return nil
	}
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
		deny = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
		pass = unix.SECCOMP_RET_ALLOW
	)
	return []unix.SockFilter{
		stmt(ld, offArch),
		jump(jeq, auditArch, 1, 0),
		stmt(ret, pass), // socketFilter kills it
		stmt(ld, offNr),
		jump(jeq, unix.SYS_LISTEN, 3, 0),
		jump(jeq, unix.SYS_ACCEPT, 2, 0),
		jump(jeq, unix.SYS_ACCEPT4, 1, 0),
		stmt(ret, pass),
		stmt(ret, deny),
	}
}
