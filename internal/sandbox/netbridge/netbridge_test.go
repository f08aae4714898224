//go:build linux

package netbridge_test

import (
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/durable-agents/agentloop/internal/sandbox/netbridge"
)

// The installed bridge (./netbridge, which on linux/amd64 runs a -send
// call in assembly before the Go runtime starts) does what Main does:
// the same listener sent, the same command executed with the same
// environment, the same exit codes and messages. Main runs as this test
// binary under the bridge's name (package netbridge's init).
func TestBuiltBridgeDoesWhatMainDoes(t *testing.T) {
	built := filepath.Join(t.TempDir(), netbridge.Name)
	build := exec.Command("go", "build", "-o", built, "github.com/durable-agents/agentloop/netbridge")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	reference := filepath.Join(t.TempDir(), netbridge.Name)
	if err := os.Symlink(self, reference); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)

	show := `echo "[$GOMAXPROCS] [$X] [$PATH]"; ls /proc/self/fd; grep SigIgn /proc/self/status`
	env := []string{"PATH=/usr/bin:/bin", "GOMAXPROCS=1", "X=y", "", "GOMAXPROCSX=2", "X=shadowed", "PATH=/shadowed", "GOMAXPROCS=2"}
	cases := []struct {
		name   string
		args   []string // PORT stands for a free port
		env    []string
		listen bool // a listener must arrive
		pipe   bool // descriptor 3 is a pipe's write end, not a socket; its read end for a guard
	}{
		{"runs the command", []string{"-send", "3", "PORT", "--", "sh", "-c", show}, env, true, false},
		{"unsets", []string{"-send", "3", "PORT", "-unset", "GOMAXPROCS", "--", "sh", "-c", show}, env, true, false},
		{"unsets PATH", []string{"-send", "3", "PORT", "-unset", "PATH", "--", "sh", "-c", show}, env, true, false},
		{"default PATH", []string{"-send", "3", "PORT", "--", "sh", "-c", show}, []string{"X=z"}, true, false},
		{"no such path", []string{"-send", "3", "PORT", "--", "/nonexistent/cmd"}, env, true, false},
		{"not on PATH", []string{"-send", "3", "PORT", "--", "nonexistent-command"}, env, true, false},
		{"not executable", []string{"-send", "3", "PORT", "--", "passwd"}, []string{"PATH=/nonexistent:relative:/etc"}, true, false},
		{"port busy", []string{"-send", "3", busyPort, "--", "true"}, env, false, false},
		{"port too high", []string{"-send", "3", "70000", "--", "true"}, env, false, false},
		{"not a socket", []string{"-send", "3", "PORT", "--", "true"}, env, false, true},
		{"descriptor 2", []string{"-send", "2", "PORT", "--", "true"}, env, false, false},
		{"not a number", []string{"-send", "3", "1x", "--", "true"}, env, false, false},
		{"no command", []string{"-send", "3", "PORT", "--"}, env, false, false},
		{"no separator", []string{"-send", "3", "PORT", "-unset", "X", "true"}, env, false, false},
		{"guard usage", []string{netbridge.Lifeline, "3"}, env, false, false},
		// The Go program, started after the assembly looked at the call.
		{"guard", []string{netbridge.Lifeline, "3", "group", "--", "sh", "-c", show + "; exit 3"}, env, false, true},
	}
	// The bridge starts with signals ignored, which the Go runtime takes
	// over (but SIGINT) and the exec then leaves at their default.
	ignored := []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGPIPE, syscall.SIGUSR1}
	signal.Ignore(ignored...)
	defer signal.Reset(ignored...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := runBridge(t, reference, c.args, c.env, c.listen, c.pipe)
			got := runBridge(t, built, c.args, c.env, c.listen, c.pipe)
			if got != want {
				t.Errorf("the built bridge:\n%+v\nMain:\n%+v", got, want)
			}
		})
	}
}

type bridgeRun struct {
	code           int
	stdout, stderr string
	listener       string // whether a listener was sent (the address, its port as PORT)
}

func runBridge(t *testing.T, bin string, args, env []string, listen, pipe bool) bridgeRun {
	t.Helper()
	port := ""
	if listen {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port = strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		l.Close()
	}
	argv := make([]string, len(args))
	for i, a := range args {
		if a == "PORT" {
			a = port
		}
		argv[i] = a
	}
	var ours, theirs *os.File
	if pipe {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		ours, theirs = r, w
		if args[0] == netbridge.Lifeline {
			ours, theirs = w, r
		}
	} else {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		ours, theirs = os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "theirs")
	}
	defer ours.Close()
	// os.StartProcess, not exec.Cmd: the environment goes as it is,
	// keys mentioned twice included.
	stdout, stderr := output(t), output(t)
	p, err := os.StartProcess(bin, append([]string{bin}, argv...),
		&os.ProcAttr{Dir: "/", Env: env, Files: []*os.File{nil, stdout, stderr, theirs}})
	theirs.Close()
	if err != nil {
		t.Fatal(err)
	}
	state, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	run := bridgeRun{code: state.ExitCode(), stdout: written(t, stdout), stderr: written(t, stderr)}
	if !pipe {
		run.listener = received(t, ours)
	}
	if listen && run.listener != "127.0.0.1:"+port {
		t.Errorf("%s sent %q, not a listener on 127.0.0.1:%s", bin, run.listener, port)
	}
	if run.listener != "" {
		run.listener = "127.0.0.1:PORT" // each run has a port of its own
	}
	return run
}

func output(t *testing.T) *os.File {
	f, err := os.CreateTemp(t.TempDir(), "output")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func written(t *testing.T, f *os.File) string {
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// received is the address of the listening socket that came over sock,
// or "" when none came.
func received(t *testing.T, sock *os.File) string {
	t.Helper()
	buf, oob := make([]byte, 1), make([]byte, syscall.CmsgSpace(4))
	_, oobn, _, _, err := syscall.Recvmsg(int(sock.Fd()), buf, oob, syscall.MSG_DONTWAIT)
	if err != nil || oobn == 0 {
		return ""
	}
	msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		t.Fatalf("control messages %v: %v", msgs, err)
	}
	fds, err := syscall.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		t.Fatalf("descriptors %v: %v", fds, err)
	}
	l, err := net.FileListener(os.NewFile(uintptr(fds[0]), "listener"))
	syscall.Close(fds[0])
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
