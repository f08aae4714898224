package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/durable-agents/agentloop/internal/sandbox/netbridge"
	"golang.org/x/sys/unix"
)

// Paths inside a bwrap sandbox.
const (
	bwrapTmp  = "/tmp"
	bwrapHome = "/tmp/home"
)

// useBwrap finds bwrap and runs `true` under the flags every command gets.
func (s *Sandbox) useBwrap() error {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return errors.New("bwrap: not installed (Debian and Ubuntu: apt-get install bubblewrap)")
	}
	if s.prlimit == "" {
		return errors.New("bwrap: prlimit (util-linux) not found")
	}
	s.bwrap, s.mode, s.bridge, s.runAs = path, Bwrap, s.findBridge(), s.cfg.RunAs
	s.listensInside = s.cfg.Bridge == "" && canEnterNetns() // netns.go
	if s.runAs == nil && os.Geteuid() == 0 {
		if s.idmap, err = newIdmap(); err != nil {
			return fmt.Errorf("bwrap: a root worker's commands run as uid %d on an idmapped workspace: %v", DefaultUser.Uid, err)
		}
		s.runAs = &DefaultUser
	}
	if s.runAs != nil && s.bridge != "" {
		if s.bridge, err = shareBridge(s.bridge); err != nil {
			return fmt.Errorf("bwrap: %v", err)
		}
	}
	if s.runAs != nil && !holds(unix.CAP_SYS_RESOURCE) { // containers may drop it
		s.limitsBy = limitsAsUser
	}
	err = s.probe()
	if errors.Is(err, syscall.EPERM) && s.limitsBy == limitsAsUser {
		// Nor may it take another user's ids (CAP_SETPCAP): prlimit(1)
		// sets them inside.
		s.limitsBy = limitsInside
		err = s.probe()
	}
	if err != nil {
		s.bwrap, s.mode, s.runAs, s.idmap, s.listensInside, s.limitsBy = "", "", nil, nil, false, limitsDirect
		return fmt.Errorf("bwrap: %v", err)
	}
	s.version = bwrapVersion(path)
	return nil
}

// probe runs `true` in a throwaway workspace and wants it to exit 0.
func (s *Sandbox) probe() error {
	ws, err := os.MkdirTemp("", tempPattern("probe"))
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	if s.idmap != nil {
		defer s.idmap.drop(ws)
	}
	if s.runAs != nil && s.idmap == nil {
		if err := chownAll(int(s.runAs.Uid), int(s.runAs.Gid), ws); err != nil {
			return err
		}
	}
	out, err := os.CreateTemp("", tempPattern("probe-out"))
	if err != nil {
		return err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	shell := "/bin/sh"
	p, err := s.Start(Spec{Shell: shell, Command: "exit 0", Dir: ws, Output: out})
	if err != nil {
		return err
	}
	exit, err := p.Wait()
	msg, _ := os.ReadFile(out.Name())
	if err == nil && (exit.Code != 0 || exit.Signal != 0) {
		err = fmt.Errorf("a command that exits 0 ended with %+v", exit)
	}
	if err != nil {
		return fmt.Errorf("%w: %s", err, bytes.TrimSpace(msg))
	}
	return nil
}

// bwrapArgs are bwrap's arguments for one command. Mounts apply in order:
// the system read-only, masks over hidden paths inside it, a fresh /dev,
// /proc of the new pid namespace, a private /tmp holding HOME, the
// workspace read-write, and masks over hidden paths inside the workspace.
func (s *Sandbox) bwrapArgs(spec Spec, ws string) []string {
	a := []string{
		"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--disable-userns", "--cap-drop", "ALL",
		// The sandbox's pid 1 (bwrap's init) and the command get a session
		// and process group of their own, which the worker signals.
		// --die-with-parent is left out on purpose: with it the whole pid
		// namespace dies the moment the shell exits, and background
		// processes would lose the grace between SIGTERM and SIGKILL they
		// get without a sandbox.
		"--new-session",
		"--json-status-fd", "3",
	}
	if s.blocks(spec) {
		a = append(a, "--block-fd", "4") // until the limits are set, or the worker listens inside
	}
	a = append(a, "--unshare-net") // with network on too (netns.go)
	if s.bridges(spec) || spec.DieWithWorker {
		a = append(a, "--ro-bind", s.bridge, bridgeBin) // the bridge; the guard inside
	}
	if s.bridges(spec) {
		a = append(a, bridgeEnv(spec)...)
	}
	if spec.DieWithWorker {
		// bwrap's own death signals leave a window: its pid 1 sets one
		// only after its set-up, and a worker killed before then leaves
		// the sandbox running; the guard closes it (lifeline.go).
		a = append(a, "--die-with-parent")
	}
	for _, dir := range s.system {
		if s.isHidden(dir) {
			continue
		}
		if target, err := os.Readlink(dir); err == nil {
			a = append(a, "--symlink", target, dir) // /bin -> usr/bin
			continue
		}
		a = append(a, "--ro-bind", dir, dir)
		a = s.masks(a, dir, ws)
	}
	a = append(a, "--dev", "/dev", "--proc", "/proc",
		"--size", strconv.FormatUint(s.cfg.Limits.TmpSize, 10), "--tmpfs", bwrapTmp, "--dir", bwrapHome,
		"--bind", s.workspaceSource(ws), ws)
	for _, p := range existing(spec.ReadPaths) { // after /tmp's tmpfs, which would cover them
		a = append(a, "--ro-bind", p, p)
		a = s.masks(a, p, ws)
	}
	a = s.masks(a, ws, ws)
	for i, dir := range s.readOnly(spec) {
		src := dir
		if s.idmap != nil {
			src = s.idmap.readOnlyStage(i)
		}
		a = append(a, "--ro-bind", src, dir)
	}
	a = append(a, "--chdir", ws, "--")
	if s.bridges(spec) {
		a = append(a, bridgeCommand(s.bridgeFD(spec), spec)...)
	}
	if spec.DieWithWorker {
		a = append(a, guardCommand(bridgeBin, s.bwrapLifelineFD(spec), "namespace")...)
	}
	if s.limitsBy == limitsInside {
		a = append(append(a, s.prlimit), s.cfg.Limits.prlimitArgs()...)
		a = append(a, "--")
	}
	return append(a, spec.argv()...)
}

// blocks says whether bwrap holds the command until the worker writes to
// descriptor 4: to set the command's limits, or to listen inside its
// network namespace first (netns.go).
func (s *Sandbox) blocks(spec Spec) bool {
	return s.limitsBy != limitsInside || spec.Network && s.listensInside
}

// bridgeFD and bwrapLifelineFD number the descriptors bwrap starts with:
// the status (3), the block when there is one (4), the bridge's end of its
// socket pair when it bridges, and the lifeline last, as the guard outside
// passes on every descriptor below the lifeline to bwrap (lifeline.go).
func (s *Sandbox) bridgeFD(spec Spec) int {
	if s.blocks(spec) {
		return 5
	}
	return 4
}

func (s *Sandbox) bwrapLifelineFD(spec Spec) int {
	if s.bridges(spec) {
		return s.bridgeFD(spec) + 1
	}
	return s.bridgeFD(spec)
}

// workspaceSource is what bwrap binds at the workspace's path: the
// workspace, or its idmapped mount.
func (s *Sandbox) workspaceSource(ws string) string {
	if s.idmap != nil {
		return s.idmap.stage
	}
	return ws
}

// masks covers each hidden path inside dir: a directory with an empty
// tmpfs that may be crossed but not listed (a workspace below it stays
// reachable), a file with an empty file nobody may read.
func (s *Sandbox) masks(a []string, dir, ws string) []string {
	for _, h := range s.hiddenWithin(dir, ws) {
		info, err := os.Stat(h)
		switch {
		case err != nil:
		case info.IsDir():
			a = append(a, "--perms", "0111", "--size", "4096", "--tmpfs", h)
		default:
			a = append(a, "--ro-bind", maskFile(), h)
		}
	}
	return a
}

var (
	maskOnce sync.Once
	maskPath string
)

// maskFile is an empty file with no permissions, bound over hidden files
// so that reading one fails ("Permission denied") instead of returning
// nothing.
func maskFile() string {
	maskOnce.Do(func() {
		f, err := os.CreateTemp("", tempPattern("mask"))
		if err != nil {
			maskPath = "/dev/null"
			return
		}
		f.Close()
		os.Chmod(f.Name(), 0)
		maskPath = f.Name()
	})
	return maskPath
}

// startBwrap starts bwrap and reads the pid of the sandbox's pid 1, which
// is the process group of the command (--new-session); bwrap itself stays
// outside it, so a SIGTERM to the group reaches the command without
// taking the sandbox down, and pid 1 ignores it (the kernel delivers a
// namespace's init only the signals it handles). SIGKILL to the group
// kills pid 1 too, and with it every process of the namespace.
//
// The limits are set with prlimit(2) on pid 1 while bwrap holds it on
// --block-fd, before anything of the command runs; everything the command
// starts inherits them. For commands of another user (RunAs, a root
// worker's) that needs CAP_SYS_RESOURCE, or that user's ids (limitsas.go).
func (s *Sandbox) startBwrap(p *Process, spec Spec) (func() (Exit, error), error) {
	ws, err := realDir(spec.Dir)
	if err != nil {
		return nil, err
	}
	if s.idmap != nil {
		// Before restrictNetwork: Landlock forbids mounting.
		if err := s.idmap.enter(ws, s.readOnly(spec)); err != nil {
			return nil, err
		}
	}
	proxyURL, err := s.restrictNetwork(spec.Network)
	if err != nil {
		return nil, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(s.bwrap, s.bwrapArgs(spec, ws)...)
	if spec.DieWithWorker {
		// A guard outside too: bwrap's monitor dies with the worker
		// (--die-with-parent, or writing the status to a closed pipe), and
		// a pid 1 it has not yet let run waits for it forever. The guard
		// kills their group, which pid 1 leaves only once it runs, and
		// passes bwrap its descriptors (lifeline.go).
		argv := append(guardCommand(s.bridge, s.bwrapLifelineFD(spec), "group", "-pass"), s.bwrap)
		cmd = exec.Command(argv[0], append(argv[1:], cmd.Args[1:]...)...)
		cmd.Args[0] = netbridge.Name // the worker's own binary serves as the guard under this name
	}
	cmd.Env = s.environment(spec, bwrapHome, bwrapTmp, proxyURL)
	spec.connect(cmd)
	cmd.ExtraFiles = []*os.File{statusW} // fd 3
	var blockW *os.File
	if s.blocks(spec) {
		var blockR *os.File
		if blockR, blockW, err = os.Pipe(); err != nil {
			statusR.Close()
			statusW.Close()
			return nil, err
		}
		defer blockR.Close()
		defer blockW.Close()
		cmd.ExtraFiles = append(cmd.ExtraFiles, blockR) // fd 4
	}
	var sent *net.UnixConn // the bridge's listener comes over it
	if s.bridges(spec) {
		var theirs *os.File
		if sent, theirs, err = bridgePair(); err != nil {
			statusR.Close()
			statusW.Close()
			return nil, err
		}
		defer theirs.Close()
		cmd.ExtraFiles = append(cmd.ExtraFiles, theirs) // fd bridgeFD
	}
	if spec.DieWithWorker {
		life, err := lifelineReader()
		if err != nil {
			statusR.Close()
			statusW.Close()
			if sent != nil {
				sent.Close()
			}
			return nil, err
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, life) // fd bwrapLifelineFD
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: s.runAs}
	err = cmd.Start()
	statusW.Close()
	if err != nil {
		statusR.Close()
		if sent != nil {
			sent.Close()
		}
		return nil, err
	}
	p.monitor = cmd.Process.Pid
	status := bufio.NewReader(statusR)
	var inside io.Closer // the listener in the command's namespace
	if sent != nil {
		inside = s.serveSent(sent)
	}
	finish := func() (Exit, error) {
		waitErr := cmd.Wait()
		if inside != nil {
			inside.Close()
		}
		rest, _ := io.ReadAll(status)
		statusR.Close()
		return bwrapExit(cmd, waitErr, rest)
	}
	child, err := readChildPID(status)
	if err == nil && s.limitsBy != limitsInside {
		err = s.setLimits(child)
	}
	if err == nil && spec.Network && s.listensInside {
		inside, err = s.listenInside(child)
	}
	if err == nil && blockW != nil {
		_, err = blockW.Write([]byte{0})
	}
	if err != nil {
		syscall.Kill(p.monitor, syscall.SIGKILL)
		finish()
		return nil, err
	}
	p.Group = child
	p.init, _ = os.FindProcess(child) // a pidfd, taken while pid 1 surely lives
	return finish, nil
}

// readChildPID reads bwrap's first status line: {"child-pid": N, ...}.
func readChildPID(r *bufio.Reader) (int, error) {
	line, err := r.ReadBytes('\n')
	var st struct {
		ChildPID int `json:"child-pid"`
	}
	if jerr := json.Unmarshal(line, &st); jerr != nil || st.ChildPID <= 0 {
		return 0, fmt.Errorf("sandbox: bwrap did not start (see its message in the output): %v", errors.Join(err, jerr))
	}
	return st.ChildPID, nil
}

// bwrapExit reads the command's exit code from bwrap's last status line,
// which bwrap writes only when the command itself ran.
func bwrapExit(cmd *exec.Cmd, waitErr error, status []byte) (Exit, error) {
	var st struct {
		ExitCode *int `json:"exit-code"`
	}
	for _, line := range bytes.Split(status, []byte("\n")) {
		if json.Unmarshal(line, &st) == nil && st.ExitCode != nil {
			return Exit{Code: *st.ExitCode}, nil
		}
	}
	exit, err := exitOf(cmd, waitErr)
	if err != nil || exit.Signal != 0 {
		return exit, err // killed (the sandbox was stopped)
	}
	return Exit{}, fmt.Errorf("sandbox: bwrap exited with code %d before the command started (its message is in the output)", exit.Code)
}

// bwrapVersion is `bwrap --version`, for the start-up log.
func bwrapVersion(path string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "bwrap"
	}
	return string(bytes.TrimSpace(out))
}
