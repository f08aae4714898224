package sandbox

import (
	"flag"
	"fmt"
	"net/netip"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Flags are a worker's -sandbox flags.
type Flags struct {
	mode                        string
	procs, openFiles            uint64
	memoryMB, fileSizeMB, tmpMB uint64
	cpu                         time.Duration
	allowNetwork                bool
	allowNets, runAs            string
}

// RegisterFlags adds the -sandbox flags to fs, with DefaultLimits as
// their defaults.
func RegisterFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{}
	d := DefaultLimits
	fs.StringVar(&f.mode, "sandbox", string(Auto), "how bash's commands are isolated: auto (bwrap, else landlock), bwrap, landlock, or none (unsandboxed: commands get the worker's files, secrets and network)")
	fs.Uint64Var(&f.procs, "sandbox-procs", d.Procs, "processes a command may run at once (RLIMIT_NPROC; not applied by the kernel to root, whose commands run as -sandbox-user or nobody)")
	fs.Uint64Var(&f.memoryMB, "sandbox-memory-mb", d.Memory>>20, "MiB of data memory per process (RLIMIT_DATA)")
	fs.DurationVar(&f.cpu, "sandbox-cpu", d.CPU, "CPU time per process (RLIMIT_CPU)")
	fs.Uint64Var(&f.fileSizeMB, "sandbox-file-size-mb", d.FileSize>>20, "MiB per file a command writes (RLIMIT_FSIZE)")
	fs.Uint64Var(&f.openFiles, "sandbox-open-files", d.OpenFiles, "open files per process (RLIMIT_NOFILE)")
	fs.Uint64Var(&f.tmpMB, "sandbox-tmp-mb", d.TmpSize>>20, "MiB of the private /tmp (memory)")
	fs.BoolVar(&f.allowNetwork, "sandbox-allow-network", true, `let runs that ask for it ("sandbox": {"network": "on"}) reach the public internet through the worker's proxy`)
	fs.StringVar(&f.allowNets, "sandbox-allow-nets", "", "comma-separated address ranges beyond the public internet that network-on commands may reach (a package mirror: 10.1.2.3/32); never the Temporal frontend or this host's own addresses")
	fs.StringVar(&f.runAs, "sandbox-user", "", "run commands as this user (name or uid:gid), for a worker running as root; the workspaces must be writable by it. Without it a root worker's commands run as nobody (65534) on an idmapped workspace under bwrap, and the Landlock fallback refuses to start")
	return f
}

// Config turns the flags into a Config; the worker adds what to hide and
// the Temporal frontend's address.
func (f *Flags) Config() (Config, error) {
	mode, err := ParseMode(f.mode)
	if err != nil {
		return Config{}, err
	}
	cfg := Config{
		Mode: mode,
		Limits: Limits{
			Procs: f.procs, Memory: f.memoryMB << 20, CPU: f.cpu,
			FileSize: f.fileSizeMB << 20, OpenFiles: f.openFiles, TmpSize: f.tmpMB << 20,
		},
		NoNetwork: !f.allowNetwork,
	}
	for _, s := range strings.Split(f.allowNets, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return Config{}, fmt.Errorf("-sandbox-allow-nets: %w", err)
		}
		cfg.AllowNets = append(cfg.AllowNets, p)
	}
	if f.runAs != "" {
		if cfg.RunAs, err = lookupUser(f.runAs); err != nil {
			return Config{}, fmt.Errorf("-sandbox-user: %w", err)
		}
	}
	return cfg, nil
}

// lookupUser reads "name" or "uid:gid".
func lookupUser(s string) (*syscall.Credential, error) {
	if u, g, ok := strings.Cut(s, ":"); ok {
		uid, err1 := strconv.ParseUint(u, 10, 32)
		gid, err2 := strconv.ParseUint(g, 10, 32)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%q: want a user name or uid:gid", s)
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	u, err := user.Lookup(s)
	if err != nil {
		return nil, err
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// Describe says in one line what commands run under, for the worker's
// start-up log.
func (s *Sandbox) Describe() string {
	if s.mode == None {
		return "none: commands run with the worker's rights, environment and network"
	}
	net := "network on: the worker's network, TCP to its proxy only, no listening"
	if s.mode == Bwrap {
		net = "network on: an empty network namespace, the worker's proxy through " + s.bridge
		if s.listensInside {
			net = "network on: an empty network namespace, the worker's proxy through a listener the worker makes inside it"
		} else if self, _ := os.Executable(); s.bridge == self {
			net += " (the worker itself as the bridge: install agentloop-netbridge next to it for faster starts)"
		}
	}
	switch {
	case s.cfg.NoNetwork:
		net = "network on: refused"
	case s.abi < 4:
		net = fmt.Sprintf("network on: unavailable (Landlock ABI %d, needs 4)", s.abi)
	}
	l := s.cfg.Limits
	limits := fmt.Sprintf("limits: %d processes, %d MiB data, %s CPU, %d MiB files, %d open files",
		l.Procs, l.Memory>>20, l.CPU, l.FileSize>>20, l.OpenFiles)
	if s.mode == Bwrap && s.limitsBy == limitsInside {
		limits += " (set by prlimit(1) inside: the worker may neither set another user's nor take its ids)"
	}
	who := "as the worker's user"
	if s.runAs != nil {
		who = fmt.Sprintf("as uid %d gid %d", s.runAs.Uid, s.runAs.Gid)
		if s.idmap != nil {
			who += fmt.Sprintf(" (a root worker's default), on the workspace mounted idmapped: its owner's files appear as uid %d's and stay its owner's on disk", s.runAs.Uid)
		}
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
