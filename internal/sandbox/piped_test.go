package sandbox

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A long-lived process (an MCP server) talks over its pipes from inside
// the sandbox: it reads the workspace and its read-only paths, not the
// rest of the host or hidden paths inside a read-only one, has the
// environment it is given and nothing of the worker's, and ends when its
// stdin closes.
func TestStartPipedServesOverPipes(t *testing.T) {
	base := t.TempDir()
	ws, install, outside := filepath.Join(base, "ws"), filepath.Join(base, "install"), filepath.Join(base, "outside")
	hidden := filepath.Join(install, "secret")
	for _, d := range []string{ws, install, outside} {
		os.MkdirAll(d, 0o755)
	}
	// An installation others may read, as under /usr or /opt: a root
	// worker's commands run as another user.
	for d := base; strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	os.WriteFile(filepath.Join(install, "lib.txt"), []byte("INSTALLED\n"), 0o644)
	os.WriteFile(hidden, []byte("HIDDEN\n"), 0o644)
	os.WriteFile(filepath.Join(outside, "f"), []byte("OUTSIDE\n"), 0o644)
	t.Setenv("AGENTLOOP_PLANTED", "PLANTED")
	// (Landlock cannot hide a file inside a directory it grants: the
	// read-only path's rules leave the hidden file out instead.)
	// A line-by-line shell "server": each line in is a command, its output
	// is the answer, then a marker line.
	server := `while read -r line; do eval "$line" 2>&1; echo END; done; echo BYE >&2`
	for mode, s := range modes(t, Config{Hide: []string{hidden}}) {
		t.Run(string(mode), func(t *testing.T) {
			ws := filepath.Join(ws, string(mode))
			os.Mkdir(ws, 0o755)
			ws = reachable(t, s, ws) // a root worker's Landlock commands run as -sandbox-user
			var stderr bytes.Buffer
			p, err := s.StartPiped(Spec{Args: []string{"/bin/bash", "-c", server}, Dir: ws, Stderr: &stderr,
				Env: map[string]string{"SERVER_TOKEN": "given"}, ReadPaths: []string{install}})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Kill()
			r := bufio.NewReader(p.Stdout)
			ask := func(cmd string) string {
				t.Helper()
				if _, err := p.Stdin.Write([]byte(cmd + "\n")); err != nil {
					t.Fatalf("write %q: %v", cmd, err)
				}
				var out strings.Builder
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						t.Fatalf("read the answer to %q: %v (so far %q)", cmd, err, out.String())
					}
					if before, ok := strings.CutSuffix(line, "END\n"); ok {
						return out.String() + before
					}
					out.WriteString(line)
				}
			}
			wantIn(t, ask("pwd; echo hi > f && cat f"), ws+"\nhi\n")
			wantIn(t, ask("cat "+filepath.Join(install, "lib.txt")), "INSTALLED")
			for cmd, leak := range map[string]string{
				"cat " + hidden:                      "HIDDEN",
				"cat " + filepath.Join(outside, "f"): "OUTSIDE",
				"env":                                "PLANTED",
				"echo x > " + install + "/w && echo wrote": "wrote",
			} {
				if got := ask(cmd); strings.Contains(got, leak) {
					t.Errorf("%s: %q leaked:\n%s", cmd, leak, got)
				}
			}
			wantIn(t, ask("echo $SERVER_TOKEN"), "given")
			p.Stdin.Close()
			exit, err := p.Wait()
			if err != nil || exit.Code != 0 {
				t.Fatalf("after stdin closed: %+v, %v", exit, err)
			}
			if rest, _ := r.ReadString('\n'); rest != "" {
				t.Errorf("output after the end: %q", rest)
			}
			wantIn(t, stderr.String(), "BYE")
		})
	}
}

func TestStartPipedRefusesHiddenReadPaths(t *testing.T) {
	base := t.TempDir()
	state := filepath.Join(base, "state")
	os.MkdirAll(filepath.Join(state, "journal"), 0o755)
	for mode, s := range modes(t, Config{Hide: []string{state}}) {
		for _, ro := range []string{state, filepath.Join(state, "journal"), "relative/path"} {
			_, err := s.StartPiped(Spec{Args: []string{"/bin/true"}, Dir: base, ReadPaths: []string{ro}})
			if err == nil {
				t.Errorf("%s: read-only %s was accepted", mode, ro)
			}
		}
	}
}

// A server started with StartPiped dies with the worker, whenever the
// worker dies: the test runs itself as the "worker", which starts servers
// under each mechanism and is SIGKILLed, once when they all run and once
// while it is still starting them (in the middle of bwrap's set-up or of
// the fork). Every process of theirs carries a token in its environment;
// none may be left 30 s after the worker's death.
func TestStartPipedDiesWithTheWorker(t *testing.T) {
	if token := os.Getenv("SANDBOX_PIPED_CHILD"); token != "" {
		sbs := modes(t, Config{})
		for i := 0; ; i++ {
			for mode, s := range sbs {
				// Network on too: more descriptors for bwrap, the worker's
				// listener in the server's namespace.
				p, err := s.StartPiped(Spec{Args: []string{"/bin/sh", "-c", "echo up; exec sleep 600"}, Network: i%2 == 1,
					Dir: reachable(t, s, t.TempDir()), Env: map[string]string{"SANDBOX_PIPED_TOKEN": token}})
				if err != nil {
					t.Fatal(err)
				}
				if os.Getenv("SANDBOX_PIPED_WAIT") == "1" {
					if up, err := bufio.NewReader(p.Stdout).ReadString('\n'); up != "up\n" {
						t.Fatalf("%s: the server did not start: %q, %v", mode, up, err)
					}
				}
				fmt.Printf("started %s\n", mode)
			}
			if i == 1 {
				fmt.Println("ready")
			}
			if i == 1 && os.Getenv("SANDBOX_PIPED_WAIT") == "1" {
				time.Sleep(time.Minute) // until killed
			}
		}
	}
	for _, tc := range []struct {
		name  string
		wait  bool   // kill the worker once its servers run
		kill  string // else once this line came
		count int    // this many times
	}{{"running", true, "ready\n", 1}, {"starting", false, "started", 1}, {"starting with network on", false, "started", 3}} {
		t.Run(tc.name, func(t *testing.T) {
			token := fmt.Sprintf("piped-%d-%d-%s", os.Getpid(), time.Now().UnixNano(), tc.name)
			cmd := exec.Command(os.Args[0], "-test.run=^TestStartPipedDiesWithTheWorker$")
			cmd.Env = append(os.Environ(), "SANDBOX_PIPED_CHILD="+token, "SANDBOX_PIPED_WAIT="+map[bool]string{true: "1"}[tc.wait])
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { killTokened(token) }) // the test failed: leave no server behind
			r := bufio.NewReader(out)
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("the child ended before it was ready: %v", err)
				}
				if strings.HasPrefix(line, tc.kill) {
					if tc.count--; tc.count == 0 {
						break
					}
				}
			}
			cmd.Process.Kill()
			cmd.Wait()
			deadline := time.Now().Add(30 * time.Second)
			for {
				left := tokened(token)
				if len(left) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("processes of the servers outlived their worker by 30 s: %s", left)
				}
				time.Sleep(50 * time.Millisecond) // the kernel delivers the death signals on its own
			}
		})
	}
}

// tokened lists the live processes whose environment holds token, with
// their command lines.
func tokened(token string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !alive(pid) {
			continue
		}
		env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		if bytes.Contains(env, []byte("="+token+"\x00")) {
			cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			found = append(found, fmt.Sprintf("%d %q", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
		}
	}
	return found
}

func killTokened(token string) {
	for _, p := range tokened(token) {
		var pid int
		fmt.Sscanf(p, "%d", &pid)
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// alive reports whether pid runs (a zombie has ended).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}
