package sandbox

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if they leave goroutines behind: the
// network proxy's servers and tunnels once its sandbox is closed, the
// waits of commands that ended.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// run runs command in ws under s and returns its output and exit.
func run(t *testing.T, s *Sandbox, ws, command string, network bool) (string, Exit) {
	t.Helper()
	return runSpec(t, s, Spec{Shell: "/bin/bash", Command: command, Dir: reachable(t, s, ws), Network: network})
}

// runSpec runs spec with its output in a file of its own and returns the
// output; a start or wait error fails the test.
func runSpec(t *testing.T, s *Sandbox, spec Spec) (string, Exit) {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	spec.Output = out
	p, err := s.Start(spec)
	if err != nil {
		t.Fatalf("start %q: %v", spec.Command, err)
	}
	exit, err := p.Wait()
	b, _ := os.ReadFile(out.Name())
	if err != nil {
		t.Fatalf("%q: %v: %s", spec.Command, err, b)
	}
	return string(b), exit
}

// modes are the mechanisms that work here, each with a fresh sandbox.
func modes(t *testing.T, cfg Config) map[Mode]*Sandbox {
	t.Helper()
	out := map[Mode]*Sandbox{}
	for _, m := range []Mode{Bwrap, Landlock} {
		cfg.Mode = m
		c := cfg
		if m == Landlock && c.RunAs == nil && os.Geteuid() == 0 {
			c.RunAs = nobody // Landlock refuses to run commands as root
		}
		s, err := New(c)
		if err != nil {
			t.Logf("%s unavailable: %v", m, err)
			continue
		}
		t.Cleanup(func() { s.Close() })
		out[m] = s
	}
	if len(out) == 0 {
		t.Skip("no sandbox works here")
	}
	return out
}

func wantIn(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("want %q in:\n%s", w, got)
		}
	}
}

func TestFilesystemAndEnvironment(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	secretDir := filepath.Join(base, "state")
	keyFile := filepath.Join(base, "keys")
	for _, d := range []string{ws, secretDir} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(secretDir, "journal"), []byte("JOURNAL"), 0o644)
	os.WriteFile(keyFile, []byte("KEY"), 0o644)
	t.Setenv("AGENTLOOP_PLANTED", "PLANTED")
	for mode, s := range modes(t, Config{Hide: []string{secretDir, keyFile}}) {
		t.Run(string(mode), func(t *testing.T) {
			ws := filepath.Join(ws, string(mode))
			os.Mkdir(ws, 0o755)
			out, _ := run(t, s, ws, `pwd; echo hi > f && cat f; env; cat `+secretDir+`/journal `+keyFile+`; echo x > /etc/agentloop-test; echo x > $TMPDIR/t && echo tmp ok; echo x > $HOME/h && echo home ok`, false)
			wantIn(t, out, ws+"\nhi\n", "tmp ok", "home ok", "PATH=")
			for _, leak := range []string{"PLANTED", "JOURNAL", "KEY"} {
				if strings.Contains(out, leak) {
					t.Errorf("%s visible:\n%s", leak, out)
				}
			}
			if _, err := os.Stat("/etc/agentloop-test"); err == nil {
				os.Remove("/etc/agentloop-test")
				t.Error("wrote outside the workspace")
			}
			t.Logf("%s", out)
		})
	}
}

// A hidden path inside the workspace (the worker's state dir when the
// workspace is its home): bwrap masks it and the rest of the workspace
// works; Landlock cannot, so it refuses the command rather than show it.
func TestHiddenInsideTheWorkspace(t *testing.T) {
	ws := t.TempDir()
	inside := filepath.Join(ws, ".local", "state")
	os.MkdirAll(inside, 0o755)
	os.WriteFile(filepath.Join(inside, "journal"), []byte("JOURNAL"), 0o644)
	for mode, s := range modes(t, Config{Hide: []string{inside}}) {
		t.Run(string(mode), func(t *testing.T) {
			if mode == Landlock {
				_, err := s.Start(Spec{Shell: "/bin/bash", Command: "true", Dir: ws, Output: os.Stdout})
				if err == nil || !strings.Contains(err.Error(), "holds paths hidden from commands ("+inside+")") {
					t.Errorf("want a refusal, got %v", err)
				}
				return
			}
			out, _ := run(t, s, ws, `echo hi > f && cat f; ls .local/state; cat .local/state/journal`, false)
			wantIn(t, out, "hi\n", "Permission denied")
			if strings.Contains(out, "JOURNAL") {
				t.Errorf("read the journal:\n%s", out)
			}
		})
	}
}

// answering listens on host's loopback address and answers each connection
// with reply, after what the client sent first when readFirst; it returns
// the port, which closes at the test's end.
func answering(t *testing.T, host, reply string, readFirst bool) int {
	t.Helper()
	ln, err := net.Listen("tcp", host+":0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if readFirst {
				c.Read(make([]byte, 4096))
			}
			c.Write([]byte(reply))
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestNetworkOff(t *testing.T) {
	port := answering(t, "127.0.0.1", "REACHED\n", false)
	for mode, s := range modes(t, Config{}) {
		t.Run(string(mode), func(t *testing.T) {
			out, _ := run(t, s, t.TempDir(), fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && cat <&3", port), false)
			if strings.Contains(out, "REACHED") {
				t.Errorf("reached the listener:\n%s", out)
			}
			t.Logf("%s", out)
		})
	}
}

func TestNetworkOnReachesOnlyThroughTheProxy(t *testing.T) {
	port := answering(t, "127.0.0.1", "HTTP/1.0 200 OK\r\n\r\nREACHED\n", false)
	for mode, s := range modes(t, Config{}) {
		t.Run(string(mode), func(t *testing.T) {
			out, _ := run(t, s, t.TempDir(), fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%d && cat <&3; curl -sS http://127.0.0.1:%d/; echo proxy=$HTTP_PROXY`, port, port), true)
			if strings.Contains(out, "REACHED") {
				t.Errorf("reached the listener:\n%s", out)
			}
			t.Logf("%s", out)
		})
	}
}

// SIGTERM to the group reaches the command (which may trap it) without
// ending the sandbox; Kill ends everything. Under bwrap that includes a
// process that left the group with setsid, since killing bwrap ends the
// pid namespace; under Landlock such a process escapes, as without a
// sandbox.
func TestTermReachesTheCommandAndKillEndsEverything(t *testing.T) {
	for mode, s := range modes(t, Config{}) {
		t.Run(string(mode), func(t *testing.T) {
			out, _ := os.CreateTemp(t.TempDir(), "out")
			defer out.Close()
			// Sleeps of durations no other process has, so that a run of
			// the same test elsewhere on the machine cannot be mistaken
			// for this one's. The loop around wait makes the trap's effect
			// certain whether SIGTERM comes before wait or during it.
			escaped, member, last := uniqueSleep(1001), uniqueSleep(1002), uniqueSleep(1003)
			command := `trap 'echo got TERM; termed=1' TERM; setsid sleep ` + escaped + ` & sleep ` + member + ` & while [ -z "$termed" ]; do wait; done; echo after; sleep ` + last
			p, err := s.Start(Spec{Shell: "/bin/bash", Command: command, Dir: reachable(t, s, t.TempDir()), Output: out})
			if err != nil {
				t.Fatal(err)
			}
			waitUntil(t, "both background sleeps run", func() bool { return len(processesRunning("sleep\x00"+escaped, "sleep\x00"+member)) == 2 })
			syscall.Kill(-p.Group, syscall.SIGTERM)
			waitUntil(t, "the trap ran and the command went on to its last sleep", func() bool { return len(processesRunning("sleep\x00"+last)) == 1 })
			b, _ := os.ReadFile(out.Name())
			wantIn(t, string(b), "got TERM", "after")
			select {
			case <-p.Done():
				t.Fatal("the command ended on SIGTERM despite its trap")
			default:
			}
			p.Kill()
			// Under bwrap the kill may reach the shell before bwrap, which
			// then reports the shell's death as 128+9 (see Exit).
			if exit, err := p.Wait(); err != nil || (exit.Signal != syscall.SIGKILL && exit.Code != 128+int(syscall.SIGKILL)) {
				t.Errorf("exit %+v, %v; want killed", exit, err)
			}
			all := []string{"sleep\x00" + escaped, "sleep\x00" + member, "sleep\x00" + last}
			defer func() {
				for _, pid := range processesRunning(all...) {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}()
			// The kernel ends a killed group, and a pid namespace, a
			// moment after the kill.
			switch mode {
			case Bwrap:
				waitUntil(t, "nothing outlives the sandbox", func() bool { return len(processesRunning(all...)) == 0 })
			case Landlock:
				waitUntil(t, "only the setsid'd sleep escapes", func() bool {
					return len(processesRunning(all[1:]...)) == 0 && len(processesRunning(all[0])) == 1
				})
			}
		})
	}
}

// uniqueSleep returns a sleep duration of about whole seconds that no
// other process on the machine has in its command line.
func uniqueSleep(whole int) string {
	return fmt.Sprintf("%d.%09d", whole, rand.IntN(1e9))
}

// waitUntil polls cond for up to 10 seconds and fails the test if it never
// holds: a test waits for what it needs, not for a guessed duration.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processesRunning returns the pids whose command line is one of cmdlines
// (arguments separated by NUL bytes).
func processesRunning(cmdlines ...string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		got := strings.TrimRight(string(b), "\x00")
		for _, c := range cmdlines {
			if got == c {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// A worker started with -workspace . gives the sandbox a relative
// directory: it mounts and grants the absolute one.
func TestRelativeWorkspace(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for mode, s := range modes(t, Config{}) {
		t.Run(string(mode), func(t *testing.T) {
			out, exit := run(t, s, ".", "pwd; touch made", false)
			if out != dir+"\n" || exit.Code != 0 {
				t.Errorf("got %q, %+v; want %s", out, exit, dir)
			}
		})
	}
}

// A workspace that holds system directories would be mounted read-write
// over them: refused.
func TestSystemWorkspaceIsRefused(t *testing.T) {
	for mode, s := range modes(t, Config{}) {
		for _, ws := range []string{"/", "/usr"} {
			_, err := s.Start(Spec{Shell: "/bin/bash", Command: "true", Dir: ws, Output: os.Stdout})
			if err == nil || !strings.Contains(err.Error(), "holds system directories") {
				t.Errorf("%s %s: %v", mode, ws, err)
			}
		}
	}
}

// A run's variables reach its commands in every mode, over the worker's.
func TestRunEnvironment(t *testing.T) {
	t.Setenv("AGENTLOOP_TEST_VAR", "worker")
	all := modes(t, Config{})
	none, err := New(Config{Mode: None})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { none.Close() })
	all[None] = none
	for mode, s := range all {
		out, err := os.CreateTemp(t.TempDir(), "out")
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.Start(Spec{Shell: "/bin/bash", Command: `echo "$AGENTLOOP_TEST_VAR $CI"`, Dir: reachable(t, s, t.TempDir()), Output: out,
			Env: map[string]string{"AGENTLOOP_TEST_VAR": "run", "CI": "1"}})
		if err != nil {
			t.Fatal(err)
		}
		p.Wait()
		if b, _ := os.ReadFile(out.Name()); string(b) != "run 1\n" {
			t.Errorf("%s: %q", mode, b)
		}
		out.Close()
	}
}
