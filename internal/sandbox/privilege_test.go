package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// nobody runs the Landlock fallback's commands in tests run as root.
var nobody = &syscall.Credential{Uid: 65534, Gid: 65534}

// reachable makes ws usable by the Landlock fallback's command user when
// that is another user (tests run as root): ws and what it holds become
// that user's, and the test's temporary directories above it may be
// crossed. It returns ws. Under bwrap a root worker's workspace is
// idmapped instead, and stays as it is.
func reachable(t *testing.T, s *Sandbox, ws string) string {
	t.Helper()
	if s.mode != Landlock || s.cfg.RunAs == nil {
		return ws
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		t.Fatal(err)
	}
	u := s.cfg.RunAs
	err = filepath.WalkDir(abs, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(u.Uid), int(u.Gid))
	})
	if err != nil {
		t.Fatal(err)
	}
	for d := filepath.Dir(abs); strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// A root worker's Landlock fallback does not run commands as root: New
// refuses without another user to run them as.
func TestLandlockRefusesRootCommands(t *testing.T) {
	if os.Geteuid() != 0 || landlockABI() < 1 {
		t.Skip("needs root and Landlock")
	}
	for _, runAs := range []*syscall.Credential{nil, {Uid: 0, Gid: 0}} {
		_, err := New(Config{Mode: Landlock, RunAs: runAs})
		if err == nil || !strings.Contains(err.Error(), "-sandbox-user") {
			t.Errorf("RunAs %v: got %v, want a refusal naming -sandbox-user", runAs, err)
		}
	}
}

// The fallback's commands of a root worker hold no capability, set no
// privilege on exec, and open neither packet nor netlink sockets: with
// root's capabilities they changed the host's interfaces and captured the
// worker's own traffic.
func TestLandlockCommandsHoldNoPrivilege(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	for _, p := range []string{"/usr/sbin/capsh", "/usr/bin/python3", "/usr/sbin/ip"} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s is not installed", p)
		}
	}
	s, err := New(Config{Mode: Landlock, RunAs: nobody})
	if err != nil {
		t.Skipf("landlock unavailable: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	mtu, err := os.ReadFile("/sys/class/net/lo/mtu")
	if err != nil {
		t.Fatal(err)
	}
	ws := reachable(t, s, t.TempDir())
	out, _ := run(t, s, ws, `capsh --print | grep -E '^(Current:|Bounding|Ambient)|no-new-privs'
python3 -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0x0300); print("PACKET-OPEN")' 2>&1 | tail -1
python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); print("RAW-OPEN")' 2>&1 | tail -1
ip -o link show lo 2>&1
ip link set lo mtu `+strings.TrimSpace(string(mtu))+` 2>&1 && echo MTU-SET`, false)
	t.Logf("%s", out)
	wantIn(t, out, "Current: =\n", "Bounding set =\n", "Ambient set =\n", "no-new-privs=1",
		"PermissionError: [Errno 13] Permission denied", "Cannot open netlink socket: Permission denied")
	for _, leak := range []string{"cap_", "PACKET-OPEN", "RAW-OPEN", "MTU-SET", "LOOPBACK"} {
		if strings.Contains(out, leak) {
			t.Errorf("%s in:\n%s", leak, out)
		}
	}
}

// Under bwrap a root worker's commands run as an unprivileged host user:
// root-only files of the system are out of reach, while the workspace's
// root-owned files (the file tools write them) can be changed, and what
// the command creates stays root's on disk.
func TestBwrapRootCommandsRunUnprivileged(t *testing.T) {
	s := rootBwrap(t)
	secret, err := os.CreateTemp("/etc", "agentloop-root-only-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(secret.Name()) })
	secret.WriteString("ROOT-ONLY-SECRET\n")
	secret.Close() // CreateTemp makes it 0600
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "by-file-tool"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, exit := run(t, s, ws, `id -u; cat `+secret.Name()+`; echo two >> by-file-tool && echo appended; mkdir d && echo x > d/made && echo created`, false)
	t.Logf("%s", out)
	if strings.Contains(out, "ROOT-ONLY-SECRET") || strings.HasPrefix(out, "0\n") {
		t.Errorf("the command ran as root:\n%s", out)
	}
	wantIn(t, out, "Permission denied", "appended", "created")
	if exit.Code != 0 {
		t.Errorf("exit %+v", exit)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "by-file-tool")); string(b) != "one\ntwo\n" {
		t.Errorf("by-file-tool holds %q", b)
	}
	for _, p := range []string{"by-file-tool", "d", "d/made"} {
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join(ws, p), &st); err != nil || st.Uid != 0 || st.Gid != 0 {
			t.Errorf("%s: %v, owner %d:%d; want root's on disk", p, err, st.Uid, st.Gid)
		}
	}
}

// What the idmapped workspace adds to a root worker's bwrap call: a mount
// namespace for the starting thread, open_tree, mount_setattr and
// move_mount (the user namespace is made once per workspace owner).
func BenchmarkIdmapMount(b *testing.B) {
	benchmarkIdmap(b, func(m *idmap, ws string) error {
		_, err := m.mount(ws, nil)
		return err
	})
}

// What a root worker's later calls in one workspace pay instead: entering
// the kept namespace (mountns.go).
func BenchmarkIdmapEnter(b *testing.B) {
	benchmarkIdmap(b, func(m *idmap, ws string) error { return m.enter(ws, nil) })
}

// benchmarkIdmap runs call on a fresh locked thread per iteration, as each
// command's start does, which ends with it.
func benchmarkIdmap(b *testing.B, call func(m *idmap, ws string) error) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	m, err := newIdmap()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(m.close)
	ws := b.TempDir()
	for b.Loop() {
		errs := make(chan error)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			errs <- call(m, ws)
		}()
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
}

// Where the workspace's file system cannot be idmapped (ramfs) a root
// worker's command is refused with an error that says why and what to do,
// rather than run as root.
func TestBwrapRootRefusesAWorkspaceThatCannotBeIdmapped(t *testing.T) {
	s := rootBwrap(t)
	ws := t.TempDir()
	if err := syscall.Mount("ramfs", ws, "ramfs", 0, ""); err != nil {
		t.Skipf("no ramfs to mount: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(ws, syscall.MNT_DETACH) })
	_, err := s.Start(Spec{Shell: "/bin/bash", Command: "id -u", Dir: ws, Output: os.Stdout})
	if err == nil || !strings.Contains(err.Error(), "cannot be mounted idmapped") || !strings.Contains(err.Error(), "-sandbox-user") {
		t.Fatalf("got %v, want a refusal saying the workspace cannot be idmapped", err)
	}
	t.Log(err)
}
