package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"syscall"
)

// Mode is how tool processes are isolated.
type Mode string

const (
	// Auto is bubblewrap where it works, else Landlock; New fails when
	// neither does.
	Auto Mode = "auto"
	// Bwrap is bubblewrap: namespaces and mounts (bwrap.go).
	Bwrap Mode = "bwrap"
	// Landlock is the fallback for machines without user namespaces
	// (landlock.go).
	Landlock Mode = "landlock"
	// None runs commands as the worker's own children with its rights and
	// network, as pi does. The operator must ask for it.
	None Mode = "none"
)

// ParseMode reads a -sandbox flag value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Auto, Bwrap, Landlock, None:
		return m, nil
	case "":
		return Auto, nil
	}
	return "", fmt.Errorf("sandbox %q: want auto, bwrap, landlock or none", s)
}

// Config is what a worker sets once for every command it runs.
type Config struct {
	Mode   Mode
	Limits Limits
	// Hide lists files and directories that commands must never see: the
	// worker's home, its state directory, key and credential files
	// (DefaultHide). bwrap does not mount them (or masks them when they
	// lie inside a mounted directory); Landlock grants no access to them.
	Hide []string
	// Frontends are the Temporal frontend's host:port addresses. A
	// command with network on can reach none of their hosts' addresses,
	// whatever AllowNets says.
	Frontends []string
	// AllowNets are address ranges outside the public internet that
	// commands with network on may reach anyway (a package mirror on a
	// private network). Loopback, private, link-local and other special
	// addresses are refused otherwise; this host's own addresses always.
	AllowNets []netip.Prefix
	// NoNetwork refuses commands that ask for network.
	NoNetwork bool
	// Bridge is the agentloop-netbridge binary (netns.go); empty finds it
	// next to the running binary or on PATH (sandboxbench compares two).
	Bridge string
	// RunAs runs commands as another user (a worker running as root):
	// the kernel does not apply the process limit to root, and root's
	// commands read root-only files. The workspace must be writable by
	// that user. Nil runs them as the worker's user, except for a root
	// worker: under bwrap as DefaultUser on an idmapped workspace
	// (idmap.go), and Landlock refuses.
	RunAs *syscall.Credential
}

// Spec is one command to run.
type Spec struct {
	// Shell runs Command with -c.
	Shell   string
	Command string
	// Dir is the workspace: the command's working directory, the only
	// directory it may write besides its private /tmp.
	Dir string
	// Output receives stdout and stderr.
	Output *os.File
	// Network gives the command the network through the worker's proxy
	// (proxy.go); off, it has none.
	Network bool
	// Env adds variables to the command's environment (Environment).
	Env map[string]string
	// ReadOnly are directories the command may read at their own path,
	// hidden or not: the run's saved outputs. bwrap mounts them
	// read-only, Landlock grants reading them; commands of -sandbox-user
	// do not get them (readonly.go).
	ReadOnly []string

	// Args, when set, is a program and its arguments, run instead of
	// Shell -c Command: a long-lived server (StartPiped).
	Args []string
	// Stdin is the command's standard input; nil is /dev/null.
	Stdin *os.File
	// Stderr, when set, receives stderr instead of Output.
	Stderr io.Writer
	// ReadPaths are host paths the command may read besides the system
	// directories (a server's installation); hidden paths inside them
	// stay hidden, and a hidden one is refused.
	ReadPaths []string
	// DieWithWorker kills the process and all it started when the
	// worker dies, however and whenever it dies: a guard (lifeline.go)
	// reads a pipe only the worker can write to, and kills the sandbox
	// (bwrap: its pid namespace; Landlock: the process group) at its end.
	DieWithWorker bool
}

// Sandbox runs commands under one Config. It is safe for concurrent use.
type Sandbox struct {
	cfg     Config
	mode    Mode
	bwrap   string   // bwrap's path (Bwrap)
	bridge  string   // the network bridge's binary (Bwrap, netns.go), the guard's (lifeline.go)
	version string   // bwrap --version
	prlimit string   // prlimit's path
	abi     int      // the kernel's Landlock ABI version, 0 without Landlock
	system  []string // system directories that exist here
	hidden  []string // Config.Hide, cleaned, those that exist
	reason  string   // why Auto did not use bwrap
	// listensInside: the worker makes the proxy's listener inside each
	// network-on command's namespace itself, without the bridge (netns.go).
	listensInside bool
	// runAs is the host user of commands: Config.RunAs, or DefaultUser
	// for a root worker under bwrap, whose workspaces are then mounted
	// idmapped (idmap.go).
	runAs *syscall.Credential
	idmap *idmap
	// limitsBy is how the limits of runAs's commands are set
	// (limitsas.go).
	limitsBy int

	proxyOnce sync.Once
	proxy     *proxy
	proxyErr  error
}

// New checks that the configured mechanism works here by running a
// command under it, and returns the sandbox. With Auto it falls back
// from bwrap to Landlock, and fails when neither works: tools must not
// silently run unsandboxed.
func New(cfg Config) (*Sandbox, error) {
	cfg.Limits = cfg.Limits.withDefaults()
	sweepStale()
	s := &Sandbox{cfg: cfg, abi: landlockABI(), system: systemDirs(), hidden: existing(cfg.Hide)}
	s.prlimit, _ = exec.LookPath("prlimit")
	switch cfg.Mode {
	case None:
		s.mode = None
		return s, nil
	case Bwrap:
		return s, s.useBwrap()
	case Landlock:
		return s, s.useLandlock()
	case Auto, "":
		berr := s.useBwrap()
		if berr == nil {
			return s, nil
		}
		if lerr := s.useLandlock(); lerr != nil {
			return nil, fmt.Errorf("no sandbox for tool processes works here: %v; %v. Install bubblewrap, or run tools unsandboxed with -sandbox=none", berr, lerr)
		}
		s.reason = berr.Error()
		return s, nil
	}
	return nil, fmt.Errorf("sandbox mode %q: want auto, bwrap, landlock or none", cfg.Mode)
}

// Mode is the mechanism in use.
func (s *Sandbox) Mode() Mode { return s.mode }

// Config is the configuration the sandbox runs with, limits filled in.
func (s *Sandbox) Config() Config { return s.cfg }

// errNetworkOff refuses a command that asks for network where it is off.
var errNetworkOff = errors.New("network is off for tool processes on this worker")

// Start starts a command. It runs on a goroutine locked to its own OS
// thread until the command has exited, and that thread then ends: bwrap's
// --die-with-parent fires when the thread that started it exits, not the
// process, and the Landlock and seccomp restrictions put on that thread
// must never apply to other goroutines.
func (s *Sandbox) Start(spec Spec) (*Process, error) {
	if err := s.check(spec); err != nil {
		return nil, err
	}
	p := &Process{done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with this goroutine
		defer close(p.done)
		wait, err := s.start(p, spec)
		started <- err
		if err == nil {
			p.exit, p.err = wait()
		}
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

func (s *Sandbox) check(spec Spec) error {
	if err := checkEnv(spec.Env); err != nil {
		return err
	}
	if s.mode == None {
		return nil
	}
	if err := s.checkReadPaths(spec.ReadPaths); err != nil {
		return err
	}
	// The workspace is mounted read-write: one that holds /usr or /etc
	// (/ itself) would hand commands the system.
	if ws, err := realDir(spec.Dir); err == nil && slices.ContainsFunc(s.system, func(sys string) bool { return within(sys, ws) }) {
		return fmt.Errorf("sandbox: the workspace %s holds system directories, which commands could then change; use a project directory", ws)
	}
	if !spec.Network {
		return nil
	}
	if s.cfg.NoNetwork {
		return errNetworkOff
	}
	if s.abi < 4 {
		return fmt.Errorf("%w: network on needs Landlock ABI 4 (Linux 6.7) to keep loopback unreachable; this kernel has %d", errNetworkOff, s.abi)
	}
	return nil
}

func (s *Sandbox) start(p *Process, spec Spec) (wait func() (Exit, error), err error) {
	switch s.mode {
	case Bwrap:
		return s.startBwrap(p, spec)
	case Landlock:
		return s.startLandlock(p, spec)
	}
	return startPlain(p, spec)
}

var (
	defaultOnce    sync.Once
	defaultSandbox *Sandbox
	defaultErr     error
)

// Default is the sandbox of tools given none: Auto, DefaultLimits, and
// DefaultHide from the process environment. It is set up on first use.
func Default() (*Sandbox, error) {
	defaultOnce.Do(func() {
		defaultSandbox, defaultErr = New(Config{Mode: Auto, Hide: DefaultHide(os.Getenv)})
	})
	return defaultSandbox, defaultErr
}
