package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
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
			out, _ := run(t, s, ws, `echo "limits $(ulimit -u) $(ulimit -d) $(ulimit -t) $(ulimit -f) $(ulimit -n)"`, false)
			// bash's ulimit counts -d and -f in KiB.
			wantIn(t, out, "limits 50 65536 30 1024 100")
			if want := os.Geteuid() == 0 && !haveSysResource(t); mode == Bwrap && s.limitsInside != want {
				t.Errorf("limits set inside by prlimit(1): %v; want %v (a root worker without CAP_SYS_RESOURCE: %v)", s.limitsInside, want, want)
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

// haveSysResource says whether this process holds CAP_SYS_RESOURCE.
func haveSysResource(t *testing.T) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		t.Fatal(err)
	}
	return has(data, unix.CAP_SYS_RESOURCE)
}

// noSysResource is set for TestLimits run again without CAP_SYS_RESOURCE.
const noSysResource = "AGENTLOOP_TEST_NO_SYS_RESOURCE"

// A root worker without CAP_SYS_RESOURCE (a container may drop it) cannot
// set its commands' limits with prlimit(2) as they run as another user;
// it falls back to prlimit(1) inside the sandbox, and the limits hold the
// same: TestLimits again, in this test binary started without the
// capability.
func TestLimitsWithoutCapSysResource(t *testing.T) {
	if os.Geteuid() != 0 || os.Getenv(noSysResource) != "" {
		t.Skip("needs root; the run without the capability is TestLimits")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv (util-linux) to drop the capability with")
	}
	cmd := exec.Command(setpriv, "--inh-caps=-sys_resource", "--bounding-set=-sys_resource", "--",
		os.Args[0], "-test.run=^TestLimits$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), noSysResource+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil || !strings.Contains(string(out), "--- PASS: TestLimits/bwrap") {
		t.Fatalf("TestLimits without CAP_SYS_RESOURCE: %v", err)
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
