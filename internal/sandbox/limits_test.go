package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
