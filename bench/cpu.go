package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CPU accounting from /proc: how much processor time the server, the
// worker and this process (the client) spent on a piece of work. Unlike
// wall time it does not depend on what else runs on the machine.

// clockTick is the unit of utime and stime in /proc/PID/stat (USER_HZ,
// 100 on Linux).
const clockTick = 10 * time.Millisecond

// procCPU returns the user+system CPU time a process has used.
func procCPU(pid int) (time.Duration, bool) {
	if pid <= 0 {
		return 0, false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(u+st) * clockTick, true
}

// cpuMeter reads the CPU time of the server, worker and client processes.
type cpuMeter struct {
	server, worker, client int
}

type cpuSample struct{ server, worker, client time.Duration }

func (m cpuMeter) sample() cpuSample {
	s, _ := procCPU(m.server)
	w, _ := procCPU(m.worker)
	c, _ := procCPU(m.client)
	return cpuSample{s, w, c}
}

func (a cpuSample) sub(b cpuSample) cpuSample {
	return cpuSample{a.server - b.server, a.worker - b.worker, a.client - b.client}
}

func (a cpuSample) add(b cpuSample) cpuSample {
	return cpuSample{a.server + b.server, a.worker + b.worker, a.client + b.client}
}

func (a cpuSample) div(n int) cpuSample {
	if n <= 0 {
		return a
	}
	d := time.Duration(n)
	return cpuSample{a.server / d, a.worker / d, a.client / d}
}

func (a cpuSample) total() time.Duration { return a.server + a.worker + a.client }

func (a cpuSample) String() string {
	return fmt.Sprintf("%.0f ms (server %.0f, worker %.0f, client %.0f)", ms(a.total()), ms(a.server), ms(a.worker), ms(a.client))
}

// listenerPID finds the process that listens on the TCP port of a
// host:port on this machine, or 0.
func listenerPID(hostPort string) int {
	_, p, err := net.SplitHostPort(hostPort)
	if err != nil {
		return 0
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return 0
	}
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) < 10 || fs[3] != "0A" { // 0A: LISTEN
				continue
			}
			local := fs[1]
			j := strings.LastIndexByte(local, ':')
			if lp, err := strconv.ParseInt(local[j+1:], 16, 32); err == nil && int(lp) == port {
				inodes[fs[9]] = true
			}
		}
	}
	if len(inodes) == 0 {
		return 0
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range procs {
		target, err := os.Readlink(fd)
		if err != nil || !strings.HasPrefix(target, "socket:[") {
			continue
		}
		if inodes[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] {
			pid, _ := strconv.Atoi(strings.Split(fd, "/")[2])
			return pid
		}
	}
	return 0
}
