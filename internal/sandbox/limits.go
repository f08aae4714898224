package sandbox

import (
	"fmt"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

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

// rlimit is one resource limit to set.
type rlimit struct {
	resource   int
	flag       string // prlimit(1)'s option
	soft, hard uint64
}

// rlimits are the limits to set, each no higher than the worker's own
// hard limit, which an unprivileged process cannot raise. The CPU limit's
// hard value comes a second after its soft one, so that a process gets
// SIGXCPU ("CPU time limit exceeded") before SIGKILL.
func (l Limits) rlimits() []rlimit {
	cpu := max(uint64(l.CPU.Seconds()), 1)
	list := []rlimit{
		{unix.RLIMIT_NPROC, "--nproc", l.Procs, l.Procs},
		{unix.RLIMIT_DATA, "--data", l.Memory, l.Memory},
		{unix.RLIMIT_CPU, "--cpu", cpu, cpu + 1},
		{unix.RLIMIT_FSIZE, "--fsize", l.FileSize, l.FileSize},
		{unix.RLIMIT_NOFILE, "--nofile", l.OpenFiles, l.OpenFiles},
	}
	for i, r := range list {
		var own unix.Rlimit
		if unix.Getrlimit(r.resource, &own) == nil {
			list[i].soft, list[i].hard = min(r.soft, own.Max), min(r.hard, own.Max)
		}
	}
	return list
}

// setLimits sets the limits on a process that has not yet run anything
// of the command's.
func (l Limits) setLimits(pid int) error {
	for _, r := range l.rlimits() {
		lim := unix.Rlimit{Cur: r.soft, Max: r.hard}
		if err := unix.Prlimit(pid, r.resource, &lim, nil); err != nil {
			return fmt.Errorf("sandbox: set the %s limit: %w", r.flag[2:], err)
		}
	}
	return nil
}

// prlimitArgs are prlimit(1)'s options for the limits.
func (l Limits) prlimitArgs() []string {
	var args []string
	for _, r := range l.rlimits() {
		args = append(args, r.flag+"="+strconv.FormatUint(r.soft, 10)+":"+strconv.FormatUint(r.hard, 10))
	}
	return args
}
