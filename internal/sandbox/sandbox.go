package sandbox

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
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
	// addresses are refused otherwise.
	AllowNets []netip.Prefix
	// NoNetwork refuses commands that ask for network.
	NoNetwork bool
	// RunAs runs commands as another user (a worker running as root):
	// the kernel does not apply the process limit to root, and root's
	// commands read root-only files. The workspace must be writable by
	// that user. Nil runs them as the worker's user.
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
}

// Exit is how a command ended.
type Exit struct {
	Code int
	// Signal is set when the shell died of a signal. Under bwrap, which
	// reports such a death as 128+n, Code holds that number instead.
	Signal syscall.Signal
}

// Sandbox runs commands under one Config. It is safe for concurrent use.
type Sandbox struct {
	cfg     Config
	mode    Mode
	bwrap   string   // bwrap's path (Bwrap)
	version string   // bwrap --version
	prlimit string   // prlimit's path
	abi     int      // the kernel's Landlock ABI version, 0 without Landlock
	system  []string // system directories that exist here
	hidden  []string // Config.Hide, cleaned, those that exist
	reason  string   // why Auto did not use bwrap

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

// Describe says in one line what commands run under, for the worker's
// start-up log.
func (s *Sandbox) Describe() string {
	if s.mode == None {
		return "none: commands run with the worker's rights, environment and network"
	}
	net := "network on: through the worker's proxy, TCP only"
	switch {
	case s.cfg.NoNetwork:
		net = "network on: refused"
	case s.abi < 4:
		net = fmt.Sprintf("network on: unavailable (Landlock ABI %d, needs 4)", s.abi)
	}
	l := s.cfg.Limits
	limits := fmt.Sprintf("limits: %d processes, %d MiB data, %s CPU, %d MiB files, %d open files",
		l.Procs, l.Memory>>20, l.CPU, l.FileSize>>20, l.OpenFiles)
	who := "as the worker's user"
	if s.cfg.RunAs != nil {
		who = fmt.Sprintf("as uid %d gid %d", s.cfg.RunAs.Uid, s.cfg.RunAs.Gid)
	} else if os.Geteuid() == 0 {
		who = "as root, to whom the kernel does not apply the process limit (see -sandbox-user)"
	}
	if s.mode == Bwrap {
		return fmt.Sprintf("%s (%s): own user, pid, mount, network, IPC and UTS namespaces, no capabilities, /tmp %d MiB; %s; %s; commands run %s",
			s.version, s.bwrap, l.TmpSize>>20, net, limits, who)
	}
	why := ""
	if s.reason != "" {
		why = " (" + s.reason + ")"
	}
	return fmt.Sprintf("landlock ABI %d and seccomp%s; %s; %s; commands run %s", s.abi, why, net, limits, who)
}

// Process is a started command.
type Process struct {
	// Group is the process group of the command and everything it starts
	// (unless they call setsid): signal it to stop the command.
	Group int
	// monitor is bwrap's own process, outside the group.
	monitor int
	// init is the sandbox's pid 1 (bwrap): see Wait.
	init     *os.Process
	reapOnce sync.Once
	done     chan struct{}
	exit     Exit
	err      error
}

// Done is closed once the command's shell has exited; what it started may
// live on until Kill.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the command and returns how it ended. An error means it
// never started (the sandbox failed; its message is in the output).
//
// Under bwrap it also reaps the sandbox's pid 1 when the worker has become
// its parent: bwrap's monitor exits with the shell, and the orphaned pid 1
// goes to the machine's init, which is the worker itself in a container
// started without --init. The handle is a pidfd, so a reused pid is never
// mistaken for it; when pid 1 is not the worker's child, Wait returns at
// once.
func (p *Process) Wait() (Exit, error) {
	<-p.done
	p.reapOnce.Do(func() {
		if p.init != nil {
			p.init.Wait()
			p.init.Release()
		}
	})
	return p.exit, p.err
}

// Kill sends SIGKILL to the command's process group. Under bwrap that
// group holds the sandbox's pid 1, whose death takes down every process of
// the namespace, including those that left the group; bwrap itself is
// killed too should it still run.
func (p *Process) Kill() {
	syscall.Kill(-p.Group, syscall.SIGKILL)
	select {
	case <-p.done:
	default:
		if p.monitor != 0 {
			syscall.Kill(p.monitor, syscall.SIGKILL)
		}
	}
}

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
	if !spec.Network || s.mode == None {
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

// Limits bound every process of a command; each is inherited by what it
// starts. Zero values take DefaultLimits.
type Limits struct {
	// Procs is RLIMIT_NPROC. Under bwrap it counts the sandbox's own
	// processes (its user namespace); under Landlock every process of the
	// worker's user. The kernel does not apply it to root.
	Procs uint64
	// Memory is RLIMIT_DATA in bytes, per process: heap and private
	// writable mappings. (RLIMIT_AS would also count the address space
	// that V8, the JVM and Go reserve without using, and break them.)
	Memory uint64
	// CPU is RLIMIT_CPU per process: SIGXCPU, then SIGKILL a second later.
	CPU time.Duration
	// FileSize is RLIMIT_FSIZE in bytes: the largest file a process writes.
	FileSize uint64
	// OpenFiles is RLIMIT_NOFILE.
	OpenFiles uint64
	// TmpSize caps the private /tmp (bwrap: a tmpfs, which is memory).
	TmpSize uint64
}

// DefaultLimits leave room for compilers, test suites and package
// managers while stopping a runaway command long before the machine.
var DefaultLimits = Limits{
	Procs:     1024,
	Memory:    4 << 30,
	CPU:       time.Hour,
	FileSize:  2 << 30,
	OpenFiles: 8192,
	TmpSize:   1 << 30,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.Procs > 0 {
		d.Procs = l.Procs
	}
	if l.Memory > 0 {
		d.Memory = l.Memory
	}
	if l.CPU > 0 {
		d.CPU = l.CPU
	}
	if l.FileSize > 0 {
		d.FileSize = l.FileSize
	}
	if l.OpenFiles > 0 {
		d.OpenFiles = l.OpenFiles
	}
	if l.TmpSize > 0 {
		d.TmpSize = l.TmpSize
	}
	return d
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
