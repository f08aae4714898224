package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/durable-agents/agentloop/internal/sandbox/netbridge"
)

// devices are the device files commands may read and write.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// landlockABI is the kernel's Landlock ABI version, 0 without Landlock.
func landlockABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// useLandlock checks for Landlock and prlimit(1), and runs a command
// under them.
func (s *Sandbox) useLandlock() error {
	if s.abi < 1 {
		return errors.New("landlock: not available in this kernel (Linux 5.13 or later with landlock in the lsm= list)")
	}
	if s.prlimit == "" {
		return errors.New("landlock: prlimit (util-linux) not found")
	}
	asRoot := s.cfg.RunAs == nil && os.Geteuid() == 0 || s.cfg.RunAs != nil && s.cfg.RunAs.Uid == 0
	if asRoot {
		// Without user namespaces no workspace can be idmapped (idmap.go),
		// so a default user could not write the workspaces.
		return errors.New("landlock: commands would run as root, who reads every root-only file the rules leave readable (/etc); give -sandbox-user an unprivileged user that can write the workspaces, or install bubblewrap")
	}
	s.mode, s.runAs, s.bridge = Landlock, s.cfg.RunAs, s.findBridge() // the bridge is the guard here
	if s.runAs != nil {
		var err error
		if s.bridge, err = shareBridge(s.bridge); err != nil {
			return fmt.Errorf("landlock: %v", err)
		}
	}
	if err := s.probe(); err != nil {
		s.mode, s.runAs = "", nil
		return fmt.Errorf("landlock: %v", err)
	}
	return nil
}

// startLandlock starts the command as the worker's child, with the thread
// that forks it stripped of every capability (caps.go) and under Landlock
// rules (read-only system, read-write workspace and a private temporary
// directory, no TCP but the proxy's port, no signals or abstract sockets
// out of the sandbox) and seccomp filters (no listening with network on),
// and the limits set by prlimit(1), which then executes the shell.
// Landlock also keeps it from ptracing or reading /proc of processes
// outside its domain, the worker among them.
func (s *Sandbox) startLandlock(p *Process, spec Spec) (func() (Exit, error), error) {
	ws, err := realDir(spec.Dir)
	if err != nil {
		return nil, err
	}
	if inside := s.hiddenWithin(ws, ws); len(inside) > 0 {
		return nil, fmt.Errorf("sandbox (landlock): the workspace %s holds paths hidden from commands (%s), which Landlock cannot hide inside a directory commands may write; use a workspace without them, or install bubblewrap",
			ws, strings.Join(inside, ", "))
	}
	tmp, err := os.MkdirTemp("", tempPattern("cmd"))
	if err != nil {
		return nil, err
	}
	home := filepath.Join(tmp, "home")
	proxyURL, port, err := s.proxyFor(spec.Network)
	if err == nil {
		err = os.Mkdir(home, 0o700)
	}
	if err == nil && s.cfg.RunAs != nil {
		err = chownAll(int(s.cfg.RunAs.Uid), int(s.cfg.RunAs.Gid), tmp, home)
	}
	if err == nil {
		err = dropCapabilities(s.cfg.RunAs != nil)
	}
	rules := s.landlockRules(ws, tmp, port, s.readOnly(spec), spec.ReadPaths)
	var life *os.File
	if err == nil && spec.DieWithWorker {
		rules = append(rules, landlock.ROFiles(s.bridge))
		life, err = lifelineReader()
	}
	if err == nil {
		err = restrictThread(landlock.V11.BestEffort(), rules, socketFilter(spec.Network, false))
	}
	if err == nil && spec.Network {
		err = installFilter(listenFilter()) // commands share the worker's network here
	}
	if err != nil {
		removeOffThread(tmp)
		return nil, err
	}
	argv := append(append([]string{s.prlimit}, s.cfg.Limits.prlimitArgs()...), "--")
	argv = append(argv, spec.argv()...)
	if spec.DieWithWorker {
		// The guard (lifeline.go) leads the command's group and kills it
		// when the worker dies. A parent-death signal would not do: the
		// kernel sends it with the credentials of the worker's thread,
		// which dropped CAP_KILL above, to a process of another user
		// (RunAs), and is refused.
		argv = append(guardCommand(s.bridge, 3, "group"), argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if spec.DieWithWorker {
		cmd.Args[0] = netbridge.Name // the worker's own binary serves as the guard under this name
	}
	cmd.Dir = ws
	cmd.Env = s.environment(spec, home, tmp, proxyURL)
	spec.connect(cmd)
	if life != nil {
		cmd.ExtraFiles = []*os.File{life} // fd 3
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: s.cfg.RunAs}
	if err := cmd.Start(); err != nil {
		removeOffThread(tmp)
		return nil, err
	}
	p.Group = cmd.Process.Pid
	return func() (Exit, error) {
		defer removeOffThread(tmp)
		return exitOf(cmd, cmd.Wait())
	}, nil
}

func chownAll(uid, gid int, paths ...string) error {
	for _, p := range paths {
		if err := os.Chown(p, uid, gid); err != nil {
			return err
		}
	}
	return nil
}

// landlockRules grant what a command may use. /proc is left out: it
// would list every process of the machine with its command line.
func (s *Sandbox) landlockRules(ws, tmp string, port uint16, readOnly, readPaths []string) []landlock.Rule {
	var rules []landlock.Rule
	for _, dir := range s.system {
		if s.isHidden(dir) {
			continue
		}
		dirs, files := s.allowedBelow(dir, ws)
		rules = append(rules, landlock.RODirs(dirs...), landlock.ROFiles(files...))
	}
	for _, p := range existing(readPaths) {
		if info, err := os.Stat(p); err == nil && !info.IsDir() {
			rules = append(rules, landlock.ROFiles(p))
			continue
		}
		dirs, files := s.allowedBelow(p, ws)
		rules = append(rules, landlock.RODirs(dirs...), landlock.ROFiles(files...))
	}
	rules = append(rules,
		landlock.RODirs(readOnly...),
		landlock.RWDirs(ws, tmp).WithRefer(),
		landlock.RWFiles(devices...).IgnoreIfMissing())
	if port != 0 {
		rules = append(rules, landlock.ConnectTCP(port))
	}
	return rules
}

// allowedBelow returns what may be read under root: root itself when
// nothing hidden lies inside it, else its entries but the hidden ones,
// split further where a hidden path lies deeper. Symlinks are left out:
// access through one is checked on its target. (Splitting works for the
// read-only system; a directory split so could not get new files, which
// is why startLandlock refuses a workspace holding hidden paths.)
func (s *Sandbox) allowedBelow(root, ws string) (dirs, files []string) {
	if len(s.hiddenWithin(root, ws)) == 0 {
		return []string{root}, nil
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, nil
	}
	for _, e := range entries {
		p := filepath.Join(root, e.Name())
		switch {
		case s.isHidden(p) && !within(ws, p):
		case e.Type()&os.ModeSymlink != 0:
		case e.IsDir():
			d, f := s.allowedBelow(p, ws)
			dirs, files = append(dirs, d...), append(files, f...)
		default:
			files = append(files, p)
		}
	}
	return dirs, files
}

// restrictThread puts the calling thread, and every process it starts
// from now on, under the Landlock rules and the seccomp filter. The
// caller has locked the goroutine to the thread and never unlocks it, so
// the thread ends with the goroutine.
func restrictThread(cfg landlock.Config, rules []landlock.Rule, filter []unix.SockFilter) error {
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("sandbox: landlock rules: %w", err)
	}
	if fd >= 0 {
		defer unix.Close(fd)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: no_new_privs: %w", err)
	}
	if fd >= 0 {
		if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
			return fmt.Errorf("sandbox: landlock: %w", err)
		}
	}
	return installFilter(filter)
}
