package sandbox

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// spaceIdle is how long a workspace's mount namespace (space) is kept
// after its last call: an agent's calls in one workspace come seconds
// apart, between model turns.
var spaceIdle = 2 * time.Minute // a variable for tests

// spaces keeps, per workspace and read-only set, the mount namespace that
// holds their idmapped mounts (idmap.mount), so that the calls after the
// first enter it (setns) instead of copying the host's mount table and
// mounting again: about 1 ms a call saved on a loaded 2-core machine.
//
// Why this keeps what the per-call mount guaranteed:
//   - Nothing outside the worker sees the mounts. The namespace belongs to
//     no process but the worker's starting threads (each leaves it when
//     it ends) and the bwrap monitors started from them; the worker holds
//     it by a descriptor of /proc/thread-self/ns/mnt, which no command
//     inherits (close-on-exec), and bwrap makes a namespace of its own
//     from it for the command.
//   - Commands see what they saw. Host mounts are slaves of the host's
//     (MS_SLAVE), so what the host mounts or unmounts later still reaches
//     bwrap's namespace, and nothing the worker mounts goes back. A
//     workspace is entered again only while its path still names the
//     directory that was mounted, with the same owner (device, inode,
//     uid and gid, compared at each call, and the mounted directories
//     still linked: a file system may give a directory made again the
//     inode of the removed one); a workspace removed and made
//     again, moved, or given another owner gets a new namespace, and so
//     does any change of its read-only set. Mounts made inside a
//     workspace after its namespace was built appear once it is rebuilt
//     (idle, or the sandbox closed).
//   - Nothing stays mounted for long: a namespace idle for spaceIdle, or
//     all of them when the sandbox closes, is let go (its descriptor
//     closed); the kernel unmounts it once the last bwrap started from it
//     has ended. A killed worker takes them with it, as before.
type spaces struct {
	mu     sync.Mutex
	byKey  map[string]*space // the workspace and read-only paths, NUL-separated
	timer  *time.Timer       // the next sweep, while any space is kept
	closed bool
}

// space is one kept mount namespace.
type space struct {
	ns   *os.File
	dirs []dirID // the workspace's, then each read-only directory's, as mounted
	// held are the mounted directories, opened O_PATH: one removed has no
	// link left, whatever inode a directory made again at its path has.
	held []*os.File
	used time.Time
}

// current says whether the namespace still holds what ids name: the same
// directories, none of them removed since.
func (k *space) current(ids []dirID) bool {
	if !slices.Equal(k.dirs, ids) || len(k.held) != len(ids) {
		return false
	}
	for _, f := range k.held {
		var st unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Nlink == 0 {
			return false
		}
	}
	return true
}

// release closes the namespace's descriptors; the kernel unmounts it once
// no bwrap started from it runs.
func (k *space) release() {
	k.ns.Close()
	for _, f := range k.held {
		f.Close()
	}
}

// holdDirs opens dirs O_PATH and checks that they are what was mounted;
// nil when one is not (it changed under the mount: not kept then).
func holdDirs(dirs []string, mounted []dirID) []*os.File {
	var held []*os.File
	for i, dir := range dirs {
		f, err := os.OpenFile(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		var st unix.Stat_t
		if err == nil {
			held = append(held, f)
			err = unix.Fstat(int(f.Fd()), &st)
		}
		if err != nil || i >= len(mounted) || idOf(&st) != mounted[i] {
			for _, f := range held {
				f.Close()
			}
			return nil
		}
	}
	return held
}

// dirID is what a mounted directory is: its device and inode, and its
// owner, whom the idmapped mount maps to DefaultUser.
type dirID struct {
	dev, ino uint64
	uid, gid uint32
}

func idOf(st *unix.Stat_t) dirID {
	return dirID{dev: st.Dev, ino: st.Ino, uid: st.Uid, gid: st.Gid}
}

// enter puts the calling thread in the mount namespace holding ws and
// readOnly idmapped at their stages, building it (idmap.mount) the first
// time. The caller has locked the goroutine to the thread and never
// unlocks it, as for idmap.mount.
func (m *idmap) enter(ws string, readOnly []string) error {
	dirs := append([]string{ws}, readOnly...)
	ids := make([]dirID, len(dirs))
	for i, dir := range dirs {
		var st unix.Stat_t
		if err := unix.Stat(dir, &st); err != nil {
			return err
		}
		ids[i] = idOf(&st)
	}
	key := strings.Join(dirs, "\x00")
	sp := &m.spaces
	sp.mu.Lock()
	defer sp.mu.Unlock() // held through setns: a sweep must not close the descriptor under it
	if sp.closed {       // mounted for this call alone, as in the thread's namespace before
		_, err := m.mount(ws, readOnly)
		return err
	}
	if kept := sp.byKey[key]; kept != nil {
		if kept.current(ids) {
			kept.used = time.Now()
			return join(kept.ns)
		}
		kept.release()
		delete(sp.byKey, key)
	}
	mounted, err := m.mount(ws, readOnly)
	if err != nil {
		return err
	}
	held := holdDirs(dirs, mounted)
	if held == nil {
		return nil // mounted for this call alone
	}
	ns, err := os.Open("/proc/thread-self/ns/mnt")
	if err != nil {
		for _, f := range held {
			f.Close()
		}
		return fmt.Errorf("sandbox: the workspace's mount namespace: %w", err)
	}
	if sp.byKey == nil {
		sp.byKey = map[string]*space{}
	}
	sp.byKey[key] = &space{ns: ns, dirs: mounted, held: held, used: time.Now()}
	if sp.timer == nil {
		sp.timer = time.AfterFunc(spaceIdle, m.sweep)
	}
	return nil
}

// join enters the namespace ns. A mount namespace may be joined only by a
// thread that shares its root and working directory with no other
// (Go's threads share them), hence unshare(CLONE_FS) first.
func join(ns *os.File) error {
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		return fmt.Errorf("sandbox: unshare CLONE_FS: %w", err)
	}
	if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("sandbox: entering the workspace's mount namespace: %w", err)
	}
	return nil
}

// sweep lets go of the namespaces idle for spaceIdle, and comes back while
// any is left.
func (m *idmap) sweep() {
	sp := &m.spaces
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.timer = nil
	var next time.Time
	for key, kept := range sp.byKey {
		if time.Since(kept.used) >= spaceIdle {
			kept.release()
			delete(sp.byKey, key)
		} else if next.IsZero() || kept.used.Before(next) {
			next = kept.used
		}
	}
	if !next.IsZero() && !sp.closed {
		sp.timer = time.AfterFunc(time.Until(next.Add(spaceIdle)), m.sweep)
	}
}

// drop lets go of the namespace kept for ws without a read-only set (the
// start-up probe's workspace, removed once the probe is done).
func (m *idmap) drop(ws string) {
	if real, err := realDir(ws); err == nil {
		ws = real // as startBwrap gave it to enter
	}
	sp := &m.spaces
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if kept := sp.byKey[ws]; kept != nil {
		kept.release()
		delete(sp.byKey, ws)
	}
}

// close lets go of every namespace; later calls mount for themselves.
func (m *idmap) close() {
	sp := &m.spaces
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.closed = true
	if sp.timer != nil {
		sp.timer.Stop()
		sp.timer = nil
	}
	for key, kept := range sp.byKey {
		kept.release()
		delete(sp.byKey, key)
	}
}
