package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// rootBwrap is a root worker's bwrap sandbox, whose commands run as
// DefaultUser on idmapped workspaces.
func rootBwrap(t *testing.T) *Sandbox {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	s, err := New(Config{Mode: Bwrap})
	if err != nil {
		t.Skipf("bwrap unavailable: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// keptNS is the namespace kept for ws (no read-only set) and its inode;
// nil and 0 when none is. (The kernel reuses a freed namespace's inode
// number.)
func keptNS(t *testing.T, s *Sandbox, ws string) (*space, uint64) {
	t.Helper()
	s.idmap.spaces.mu.Lock()
	defer s.idmap.spaces.mu.Unlock()
	kept := s.idmap.spaces.byKey[ws]
	if kept == nil {
		return nil, 0
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(kept.ns.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	return kept, st.Ino
}

// nsHolders counts this process's threads and descriptors in or on the
// mount namespace of inode ino.
func nsHolders(t *testing.T, ino uint64) int {
	t.Helper()
	n := 0
	var links []string
	for _, pattern := range []string{"/proc/self/task/*/ns/mnt", "/proc/self/fd/*"} {
		found, _ := filepath.Glob(pattern)
		links = append(links, found...)
	}
	for _, l := range links {
		if target, err := os.Readlink(l); err == nil && target == "mnt:["+strconv.FormatUint(ino, 10)+"]" {
			n++
		}
	}
	return n
}

// A root worker's calls in one workspace share one idmapped mount: the
// namespace holding it is built by the first call and entered by the
// next, which still see the workspace as it is now; a workspace made
// again at the same path gets a new one, and closing the sandbox lets the
// namespace go.
func TestIdmappedWorkspaceIsKeptAndLetGo(t *testing.T) {
	s := rootBwrap(t)
	if n := len(s.idmap.spaces.byKey); n != 0 {
		t.Fatalf("%d namespaces kept before the first call; want the probe's let go", n)
	}
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "first"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := run(t, s, ws, `cat first; id -u; echo made > by-command`, false)
	wantIn(t, out, "one", strconv.Itoa(int(DefaultUser.Uid)))
	first, ns := keptNS(t, s, ws)
	if first == nil {
		t.Fatal("no namespace kept after the first call")
	}
	// What the host writes between calls is seen; what the command wrote
	// is root's on disk, as with a mount made per call.
	if err := os.WriteFile(filepath.Join(ws, "second"), []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ = run(t, s, ws, `cat first second by-command; stat -c %u by-command`, false)
	wantIn(t, out, "one", "two", "made", strconv.Itoa(int(DefaultUser.Uid)))
	if again, ino := keptNS(t, s, ws); again != first || ino != ns {
		t.Fatalf("the second call entered namespace %d; want the first's, %d", ino, ns)
	}
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(ws, "by-command"), &st); err != nil || st.Uid != 0 {
		t.Fatalf("by-command: %v, owner %d; want root's on disk", err, st.Uid)
	}

	// The workspace removed and made again: the old mount holds the
	// removed directory, so the call must not enter it.
	makeAgain(t, ws)
	out, _ = run(t, s, ws, `ls; cat new`, false)
	wantIn(t, out, "fresh")
	if out != "new\nfresh\n" {
		t.Errorf("the workspace made again lists:\n%s", out)
	}
	again, renewed := keptNS(t, s, ws)
	if again == nil || again == first {
		t.Fatal("the namespace of the removed workspace was entered again; want a new one")
	}

	s.Close()
	if kept, _ := keptNS(t, s, ws); kept != nil {
		t.Fatal("a namespace is still kept after Close")
	}
	// The threads that started the commands leave it as they end, which
	// they do once the command has (Start).
	deadline := time.Now().Add(10 * time.Second)
	for nsHolders(t, renewed) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("namespace %d still held by %d threads or descriptors after Close", renewed, nsHolders(t, renewed))
		}
		time.Sleep(10 * time.Millisecond)
	}
	// After Close a call still works, in a namespace of its own.
	out, _ = run(t, s, ws, `cat new`, false)
	wantIn(t, out, "fresh")
	if kept, _ := keptNS(t, s, ws); kept != nil {
		t.Fatal("a namespace was kept after Close")
	}
}

// A kept namespace idle for spaceIdle is let go.
func TestIdmappedWorkspaceLetGoWhenIdle(t *testing.T) {
	old := spaceIdle
	spaceIdle = 50 * time.Millisecond
	t.Cleanup(func() { spaceIdle = old })
	s := rootBwrap(t)
	ws := t.TempDir()
	run(t, s, ws, `true`, false)
	deadline := time.Now().Add(10 * time.Second)
	for kept, _ := keptNS(t, s, ws); kept != nil; kept, _ = keptNS(t, s, ws) {
		if time.Now().After(deadline) {
			t.Fatal("the namespace is still kept 10 s after its last call")
		}
		time.Sleep(10 * time.Millisecond)
	}
	out, _ := run(t, s, ws, `echo again`, false)
	wantIn(t, out, "again")
}

// A file system may give a workspace made again the inode of the removed
// one, so that its device, inode and owner are those the kept namespace
// recorded: the removed directory, which that namespace still mounts, has
// no link left, and the call gets a new namespace.
func TestIdmappedWorkspaceMadeAgainWithTheSameIdentity(t *testing.T) {
	s := rootBwrap(t)
	ws := t.TempDir()
	run(t, s, ws, `true`, false)
	first, _ := keptNS(t, s, ws)
	if first == nil {
		t.Fatal("no namespace kept after the first call")
	}
	makeAgain(t, ws)
	// What inode reuse would show: the new directory's identity is the
	// one recorded.
	var st unix.Stat_t
	if err := unix.Stat(ws, &st); err != nil {
		t.Fatal(err)
	}
	s.idmap.spaces.mu.Lock()
	first.dirs[0] = idOf(&st)
	s.idmap.spaces.mu.Unlock()

	out, _ := run(t, s, ws, `cat new`, false)
	wantIn(t, out, "fresh")
	if again, _ := keptNS(t, s, ws); again == nil || again == first {
		t.Fatal("the namespace of the removed workspace was entered again; want a new one")
	}
}

// makeAgain removes the workspace ws and makes it again, holding one file,
// new, that reads "fresh".
func makeAgain(t *testing.T, ws string) {
	t.Helper()
	if err := os.RemoveAll(ws); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "new"), []byte("fresh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
