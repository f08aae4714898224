package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The limits hold inside, whichever way they were set (prlimit(2) under
// bwrap, prlimit(1) under Landlock), and a command meets them with the
// kernel's own errors.
func TestLimits(t *testing.T) {
	limits := Limits{Procs: 50, Memory: 64 << 20, CPU: 30 * time.Second, FileSize: 1 << 20, OpenFiles: 100, TmpSize: 8 << 20}
	for mode, s := range modes(t, Config{Limits: limits}) {
		t.Run(string(mode), func(t *testing.T) {
			ws := t.TempDir()
			dumpable, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
			out, _ := run(t, s, ws, `echo "limits $(ulimit -u) $(ulimit -d) $(ulimit -t) $(ulimit -f) $(ulimit -n)"`, false)
			// bash's ulimit counts -d and -f in KiB.
			wantIn(t, out, "limits 50 65536 30 1024 100")
			if mode == Bwrap && os.Geteuid() == 0 {
				checkLimitsBy(t, s, dumpable)
			}
			out, _ = run(t, s, ws, `head -c 2000000 /dev/zero > big; ls -l big | cut -d' ' -f5`, false)
			wantIn(t, out, "File size limit exceeded", "1048576")
			out, _ = run(t, s, ws, `v=$(head -c 100000000 /dev/zero | tr '\0' x); echo "held ${#v}"`, false)
			wantIn(t, out, "cannot allocate")
			if mode == Bwrap {
				out, _ = run(t, s, ws, `for i in $(seq 10); do head -c 1000000 /dev/zero > /tmp/f$i || break; done`, false)
				wantIn(t, out, "No space left on device")
			}
		})
	}
}

// limitsByEnv names, for TestLimits run again without some capability, the
// way the limits must then be set.
const limitsByEnv = "AGENTLOOP_TEST_LIMITS_BY"

// checkLimitsBy checks how a root worker's sandbox sets the limits of its
// commands (another user's), and that it left every thread of the
// process with the worker's own ids (those of the test's thread) and the
// process as dumpable as it was.
func checkLimitsBy(t *testing.T, s *Sandbox, dumpable int) {
	t.Helper()
	want := strconv.Itoa(limitsDirect)
	if !holds(unix.CAP_SYS_RESOURCE) {
		want = strconv.Itoa(limitsAsUser)
	}
	if env := os.Getenv(limitsByEnv); env != "" {
		want = env
	}
	if got := strconv.Itoa(s.limitsBy); got != want {
		t.Errorf("limits set by way %s; want %s (%d direct, %d as the user, %d prlimit(1) inside)", got, want, limitsDirect, limitsAsUser, limitsInside)
	}
	ruid, euid, suid := unix.Getresuid()
	rgid, egid, sgid := unix.Getresgid()
	ids := map[string]string{ // /proc's order: real, effective, saved, filesystem
		"Uid:": strings.Join([]string{strconv.Itoa(ruid), strconv.Itoa(euid), strconv.Itoa(suid), strconv.Itoa(euid)}, " "),
		"Gid:": strings.Join([]string{strconv.Itoa(rgid), strconv.Itoa(egid), strconv.Itoa(sgid), strconv.Itoa(egid)}, " "),
	}
	tasks, _ := filepath.Glob("/proc/self/task/*/status")
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue // the thread has ended
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			if w, ok := ids[f[0]]; ok && strings.Join(f[1:], " ") != w {
				t.Errorf("%s: %s; want the worker's ids, %s", task, line, w)
			}
		}
	}
	if d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || d != dumpable {
		t.Errorf("dumpable %d (%v); want %d as before", d, err, dumpable)
	}
}

// A root worker without CAP_SYS_RESOURCE (a container may drop it) sets
// its commands' limits as their user; one without CAP_SETPCAP either has
// prlimit(1) set them inside. The limits hold the same: TestLimits again,
// in this test binary started without those capabilities.
func TestLimitsWithoutCapabilities(t *testing.T) {
	if os.Geteuid() != 0 || os.Getenv(limitsByEnv) != "" {
		t.Skip("needs root; the runs without the capabilities are TestLimits")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv (util-linux) to drop capabilities with")
	}
	for _, c := range []struct {
		drop string
		ids  []string // the worker's group, where not root's: the thread takes it back
		by   int
	}{
		{"-sys_resource", nil, limitsAsUser},
		{"-sys_resource", []string{"--regid=100", "--clear-groups"}, limitsAsUser},
		{"-sys_resource,-setpcap", nil, limitsInside},
	} {
		drop, by := c.drop, c.by
		t.Run(strings.Join(append([]string{drop}, c.ids...), " "), func(t *testing.T) {
			args := append([]string{"--inh-caps=" + drop, "--bounding-set=" + drop}, c.ids...)
			args = append(args, "--", os.Args[0], "-test.run=^TestLimits$", "-test.count=1", "-test.v")
			cmd := exec.Command(setpriv, args...)
			cmd.Env = append(os.Environ(), limitsByEnv+"="+strconv.Itoa(by))
			out, err := cmd.CombinedOutput()
			t.Logf("%s", out)
			if err != nil || !strings.Contains(string(out), "--- PASS: TestLimits/bwrap") {
				t.Fatalf("TestLimits without %s: %v", drop, err)
			}
		})
	}
}

// Files named by the variables that locate the worker's secrets are
// hidden wherever they are, even inside the workspace.
func TestSecretFilesNamedByTheEnvironment(t *testing.T) {
	ws := t.TempDir()
	key := filepath.Join(ws, "tls.key")
	if err := os.WriteFile(key, []byte("PLANTED-KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEMPORAL_TLS_KEY", key)
	for mode, s := range modes(t, Config{Hide: DefaultHide(os.Getenv)}) {
		t.Run(string(mode), func(t *testing.T) {
			if mode == Landlock {
				t.Skip("Landlock refuses a workspace holding hidden paths (TestHiddenInsideTheWorkspace)")
			}
			out, _ := run(t, s, ws, "cat tls.key", false)
			if strings.Contains(out, "PLANTED") {
				t.Errorf("read the key: %s", out)
			}
			wantIn(t, out, "Permission denied")
		})
	}
}

// With network on, the only internet sockets are plain TCP, and Landlock
// lets those reach the proxy alone: MPTCP (which Landlock does not see)
// and UDP are refused by the seccomp filter.
func TestNetworkOnRefusesMPTCPAndUDP(t *testing.T) {
	for mode, s := range modes(t, Config{}) {
		t.Run(string(mode), func(t *testing.T) {
			out, _ := run(t, s, t.TempDir(), `python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)" 2>&1 | tail -1; exec 3<>/dev/udp/127.0.0.1/53 && echo UDP-OPEN`, true)
			wantIn(t, out, "PermissionError", "/dev/udp/127.0.0.1/53: Permission denied")
			if strings.Contains(out, "UDP-OPEN") {
				t.Errorf("UDP open: %s", out)
			}
		})
	}
}
