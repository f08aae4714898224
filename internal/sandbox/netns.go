package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/durable-agents/agentloop/internal/sandbox/netbridge"
)

// A bwrap command with network on gets an empty network namespace, as one
// with network off does: loopback and nothing else. What it may not do
// therefore cannot be reached at all, rather than being refused one
// mechanism at a time: a socket it listens on is invisible to the host,
// the frontend and the host's services are not there to connect to, and
// no packet of the worker's is there to capture. HTTP_PROXY names
// 127.0.0.1:bridgePort inside the namespace, where connections go to the
// worker's proxy:
//
//   - A worker that may enter the namespace (CAP_SYS_ADMIN: a root worker)
//     makes that listener itself while bwrap holds the command
//     (--block-fd): setns on the thread that started bwrap, which is
//     locked and ends with the command, a socket, and back in the worker
//     a goroutine forwarding its connections to the proxy. No process is
//     added to the call.
//   - Any other worker cannot enter it (setns needs CAP_SYS_ADMIN in the
//     worker's own user namespace too): bwrap starts the bridge (package
//     netbridge) in place of the command, which listens inside, sends the
//     listening socket to the worker over one end of a socket pair the
//     worker handed down (SCM_RIGHTS), and executes the command in its own
//     place. The worker serves that listener as it serves its own. The
//     bridge is a small binary (agentloop-netbridge: a Go program's start
//     and one exec, which the call pays) because the worker's own takes
//     tens of milliseconds to initialise its packages; the worker still
//     serves as the bridge where the small one is not installed.
const (
	bridgeDir  = "/run/agentloop"
	bridgeBin  = bridgeDir + "/" + netbridge.Name
	bridgePort = 3128
)

var bridgeURL = "http://127.0.0.1:" + strconv.Itoa(bridgePort)

// findBridge returns Config.Bridge, else agentloop-netbridge next to the
// running binary or on PATH, else the running binary itself (which links
// netbridge, and so is the bridge when run under its name).
func (s *Sandbox) findBridge() string {
	if s.cfg.Bridge != "" {
		return s.cfg.Bridge
	}
	self, err := os.Executable()
	if err == nil {
		if p := filepath.Join(filepath.Dir(self), netbridge.Name); isExecutable(p) {
			return p
		}
	}
	if p, err := exec.LookPath(netbridge.Name); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	return self
}

func isExecutable(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0
}

// bridges says whether the bridge starts the command: network on, where
// the worker cannot listen inside itself.
func (s *Sandbox) bridges(spec Spec) bool {
	return spec.Network && !s.listensInside
}

// bridgeCommand comes before the command: the bridge sends its listener
// over descriptor fd and executes the command. bridgeEnv is what bwrap
// sets for the bridge alone: GOMAXPROCS=1, which the bridge removes before
// the exec, unless the run sets GOMAXPROCS itself (the bridge then starts
// with the run's). One processor keeps the Go runtime from starting
// threads that the exec then has to end, which on a busy machine take
// longer to end than the bridge takes to run.
func bridgeCommand(fd int, spec Spec) []string {
	a := []string{bridgeBin, netbridge.Send, strconv.Itoa(fd), strconv.Itoa(bridgePort)}
	if _, set := spec.Env["GOMAXPROCS"]; !set {
		a = append(a, netbridge.Unset, "GOMAXPROCS")
	}
	return append(a, "--")
}

func bridgeEnv(spec Spec) []string {
	if _, set := spec.Env["GOMAXPROCS"]; set {
		return nil
	}
	return []string{"--setenv", "GOMAXPROCS", "1"}
}

// restrictNetwork prepares a bwrap command that asks for network, and
// returns the proxy URL it gets. Besides the empty namespace, the thread
// that starts bwrap keeps the Landlock and seccomp rules that held when
// commands shared the worker's namespace, a second layer: TCP may bind
// and connect to the bridge's port alone (Landlock), no other kind of
// internet socket may be opened (seccomp: UDP, raw and MPTCP sockets,
// which Landlock does not see, and io_uring), and nothing outside the
// sandbox may be signalled or reached through an abstract socket.
func (s *Sandbox) restrictNetwork(network bool) (string, error) {
	if !network {
		return "", nil
	}
	if _, err := s.theProxy(); err != nil {
		return "", err
	}
	cfg := landlock.Config{
		HandledAccessNet: landlock.AccessNetSet(ll.AccessNetBindTCP | ll.AccessNetConnectTCP),
		Scoped:           landlock.ScopedSet(ll.ScopeAbstractUnixSocket | ll.ScopeSignal),
	}.BestEffort()
	rules := []landlock.Rule{landlock.ConnectTCP(bridgePort), landlock.BindTCP(bridgePort)}
	return bridgeURL, restrictThread(cfg, rules, socketFilter(true, true))
}

// shareBridge makes the bridge's binary readable by commands of another
// user (Config.RunAs, or a root worker's DefaultUser), as whom bwrap runs:
// the binary may lie in a directory only the worker can enter
// (/root/go/bin, a test's temporary directory). A hard link to it (a copy
// across file systems, or when others may not run it) goes into a
// directory named for the worker's pid, which sweepStale removes once the
// worker is gone.
func shareBridge(bridge string) (string, error) {
	dir, err := os.MkdirTemp("", tempPattern("bridge"))
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	shared := filepath.Join(dir, netbridge.Name)
	if err == nil {
		var info os.FileInfo
		if info, err = os.Stat(bridge); err == nil && (info.Mode()&0o005 != 0o005 || os.Link(bridge, shared) != nil) {
			var data []byte
			if data, err = os.ReadFile(bridge); err == nil {
				err = os.WriteFile(shared, data, 0o755)
			}
		}
	}
	if err != nil {
		return "", fmt.Errorf("the network bridge %s for commands of another user: %w", bridge, err)
	}
	return shared, nil
}

// listenInside makes the proxy's listener in the network namespace of
// bwrap's child (pid, on the host), on the calling thread, and serves it
// until the returned listener is closed. The thread stays in that
// namespace: Start locked it and ends it with the command.
func (s *Sandbox) listenInside(pid int) (io.Closer, error) {
	ns, err := os.Open("/proc/" + strconv.Itoa(pid) + "/ns/net")
	if err != nil {
		return nil, fmt.Errorf("sandbox: the command's network namespace: %w", err)
	}
	defer ns.Close()
	if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
		return nil, fmt.Errorf("sandbox: entering the command's network namespace: %w", err)
	}
	fd, err := netbridge.Listen(bridgePort)
	if err != nil {
		return nil, fmt.Errorf("sandbox: the proxy's listener in the command's network namespace: %w", err)
	}
	f := os.NewFile(uintptr(fd), "bridge")
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, err
	}
	go serveBridge(ln, s.proxy.socket)
	return ln, nil
}

// bridgePair is the socket pair the bridge sends its listener over: the
// worker's end, and the end bwrap hands down to the bridge.
func bridgePair() (*net.UnixConn, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: the network bridge's socket pair: %w", err)
	}
	mine := os.NewFile(uintptr(fds[0]), "bridge")
	defer mine.Close() // FileConn holds a copy
	c, err := net.FileConn(mine)
	if err != nil {
		syscall.Close(fds[1])
		return nil, nil, fmt.Errorf("sandbox: the network bridge's socket pair: %w", err)
	}
	return c.(*net.UnixConn), os.NewFile(uintptr(fds[1]), "bridge-child"), nil
}

// sentListener is the listener the bridge sends from inside a command's
// namespace, served by the worker from the moment it arrives.
type sentListener struct {
	c    *net.UnixConn
	done chan struct{}
	ln   net.Listener // set before done closes, nil when nothing came
}

// serveSent waits on c for the bridge's listener and serves it. It does
// not hold the call up: a connection made before the listener arrives
// waits in its backlog. Close ends the wait (the bridge failed, or the
// command ended first) and the serving.
func (s *Sandbox) serveSent(c *net.UnixConn) io.Closer {
	sl := &sentListener{c: c, done: make(chan struct{})}
	go func() {
		defer close(sl.done)
		ln, err := receiveListener(c)
		if err != nil {
			return // the bridge said why in the command's output, or the call is over
		}
		sl.ln = ln
		go serveBridge(ln, s.proxy.socket)
	}()
	return sl
}

func (sl *sentListener) Close() error {
	sl.c.Close()
	<-sl.done
	if sl.ln != nil {
		return sl.ln.Close()
	}
	return nil
}

// receiveListener reads the one descriptor the bridge sends (received
// close-on-exec: the net package asks for MSG_CMSG_CLOEXEC), a listening
// TCP socket.
func receiveListener(c *net.UnixConn) (net.Listener, error) {
	oob := make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := c.ReadMsgUnix(make([]byte, 1), oob)
	if err != nil {
		return nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("sandbox: the network bridge sent no listener (%d messages): %v", len(msgs), err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, fmt.Errorf("sandbox: the network bridge sent %d descriptors: %v", len(fds), err)
	}
	f := os.NewFile(uintptr(fds[0]), "bridge")
	defer f.Close()
	return net.FileListener(f)
}

// serveBridge forwards each connection to the proxy's Unix socket until
// the listener is closed.
func serveBridge(ln net.Listener, socket string) {
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
		return // the proxy lives as long as the worker
	}
	defer up.Close()
	go func() {
		io.Copy(up, c)
		up.(*net.UnixConn).CloseWrite()
	}()
	io.Copy(c, up)
}

// canEnterNetns says whether the worker may move a thread into another
// network namespace (CAP_SYS_ADMIN, and no seccomp or LSM rule against
// setns): tried on a throwaway thread, into its own namespace.
func canEnterNetns() bool {
	ok := make(chan bool)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		ns, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			ok <- false
			return
		}
		defer ns.Close()
		ok <- unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET) == nil
	}()
	return <-ok
}
