package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// DefaultUser is the host user of commands when the worker runs as root
// under bubblewrap and -sandbox-user is not given: nobody and nogroup on
// Debian and most distributions. bwrap started by root would map the
// command's user to host root, who reads every root-only file of the
// system directories (/etc/shadow).
var DefaultUser = syscall.Credential{Uid: 65534, Gid: 65534}

// idmap mounts the workspaces of those commands idmapped: files owned on
// disk by the workspace's owner (root, for the files the worker's file
// tools write) appear owned by DefaultUser, and what the command creates
// lands on disk owned by the workspace's owner. Nothing on disk is
// chowned. The mount is made in a mount namespace of the thread that
// starts bwrap, at stage, which bwrap binds at the workspace's path; no
// other process of the host sees it. The namespace is kept for the
// workspace's next calls, and let go when idle or when the sandbox closes
// (mountns.go); a killed worker takes it with it.
//
// bwrap runs as the command's user, who must reach the mount: the
// workspace's own path may cross root-only directories (/root/project),
// so the mount is put at a fixed, empty, root-owned directory instead.
type idmap struct {
	stage string // where the mount goes in the thread's namespace
	// roStage holds, at 0, 1, ..., the read-only idmapped mounts of a
	// command's Spec.ReadOnly directories (the run's saved outputs, in the
	// worker's 0700 state directory), bound by bwrap at their own paths.
	roStage string
	mu      sync.Mutex // guards userns
	// userns holds, per workspace owner, a user namespace that maps that
	// owner's uid and gid to DefaultUser's: what an idmapped mount takes.
	userns map[[2]uint32]*os.File
	// spaces are the mount namespaces kept for the calls that follow
	// (mountns.go).
	spaces spaces
}

// newIdmap makes the staging directory: /run/agentloop-workspace, or
// under the temporary directory where /run does not exist.
func newIdmap() (*idmap, error) {
	parent := "/run"
	if _, err := os.Stat(parent); err != nil {
		parent = os.TempDir()
	}
	stage := filepath.Join(parent, "agentloop-workspace")
	if err := os.Mkdir(stage, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	// In a directory others may write (/tmp), someone could have put a
	// symlink or a directory of their own there first.
	var st unix.Stat_t
	if err := unix.Lstat(stage, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Uid != 0 {
		return nil, fmt.Errorf("%s is not a directory owned by root", stage)
	}
	roStage := filepath.Join(parent, "agentloop-readonly")
	for i := range maxReadOnly {
		if err := os.MkdirAll(filepath.Join(roStage, strconv.Itoa(i)), 0o755); err != nil {
			return nil, err
		}
	}
	if err := unix.Lstat(roStage, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Uid != 0 {
		return nil, fmt.Errorf("%s is not a directory owned by root", roStage)
	}
	return &idmap{stage: stage, roStage: roStage, userns: map[[2]uint32]*os.File{}}, nil
}

// maxReadOnly is how many Spec.ReadOnly directories a command of a root
// worker gets (the tools give one: the run's saved outputs).
const maxReadOnly = 4

// readOnlyStage is where the i-th read-only directory is mounted.
func (m *idmap) readOnlyStage(i int) string {
	return filepath.Join(m.roStage, strconv.Itoa(i))
}

// mount mounts ws at m.stage, idmapped from its owner to DefaultUser, in
// a new mount namespace of the calling thread, which bwrap started from
// that thread inherits, and returns what it mounted. The caller has
// locked the goroutine to the thread and never unlocks it: the namespace
// must stay the thread's own (or the worker's, kept by enter).
//
// readOnly, the command's Spec.ReadOnly directories, are mounted the same
// way but read-only at readOnlyStage(i): their owner (the worker) keeps
// them 0700, which DefaultUser could not otherwise enter.
func (m *idmap) mount(ws string, readOnly []string) ([]dirID, error) {
	if len(readOnly) > maxReadOnly {
		return nil, fmt.Errorf("sandbox: %d read-only directories for one command; at most %d", len(readOnly), maxReadOnly)
	}
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return nil, fmt.Errorf("sandbox: a mount namespace for the workspace: %w", err)
	}
	// Shared mounts would pass the new mounts on to the host's namespace;
	// slaves still receive what the host mounts later (spaces).
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return nil, fmt.Errorf("sandbox: private mounts: %w", err)
	}
	ids := make([]dirID, 0, 1+len(readOnly))
	id, err := m.mountAt(ws, m.stage, 0)
	if err != nil {
		return nil, err
	}
	ids = append(ids, id)
	for i, dir := range readOnly {
		if id, err = m.mountAt(dir, m.readOnlyStage(i), unix.MOUNT_ATTR_RDONLY); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// mountAt mounts dir at stage, idmapped from dir's owner to DefaultUser,
// with the attributes in extra set too, and returns what it mounted: the
// directory the clone holds, whatever dir names by the time enter looks
// again. The mounted tree is private: a mount made inside the workspace
// later would come in without the idmapping.
func (m *idmap) mountAt(dir, stage string, extra uint64) (dirID, error) {
	fd, err := unix.OpenTree(unix.AT_FDCWD, dir, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		return dirID{}, fmt.Errorf("sandbox: open_tree %s: %w", dir, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return dirID{}, err
	}
	userns, err := m.usernsFor(st.Uid, st.Gid)
	if err != nil {
		return dirID{}, fmt.Errorf("sandbox: a user namespace for the idmapped mount of %s: %w", dir, err)
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP | extra, Userns_fd: uint64(userns.Fd()), Propagation: unix.MS_PRIVATE}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
		return dirID{}, fmt.Errorf("sandbox: the workspace %s cannot be mounted idmapped (%w): commands of a root worker run as uid %d and need it to write root's files; its file system must support idmapped mounts (Linux 5.12 or later: ext4, xfs, btrfs; tmpfs since 6.3). Otherwise run the worker as an unprivileged user, or give -sandbox-user a user that can write the workspaces",
			dir, err, DefaultUser.Uid)
	}
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, stage, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return dirID{}, fmt.Errorf("sandbox: move_mount to %s: %w", stage, err)
	}
	return idOf(&st), nil
}

// usernsFor returns a user namespace mapping uid and gid to DefaultUser's,
// made once per owner: a child process is started in it and its
// /proc/PID/ns/user kept open, which keeps the namespace after the child
// is gone.
func (m *idmap) usernsFor(uid, gid uint32) (*os.File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := [2]uint32{uid, gid}
	if f := m.userns[key]; f != nil {
		return f, nil
	}
	cmd := exec.Command("/bin/sh", "-c", "read x")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: int(uid), HostID: int(DefaultUser.Uid), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: int(gid), HostID: int(DefaultUser.Gid), Size: 1}},
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	f, err := os.Open("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/ns/user")
	stdin.Close()
	cmd.Wait()
	if err != nil {
		return nil, err
	}
	m.userns[key] = f
	return f, nil
}
