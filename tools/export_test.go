package tools

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SleepMarker returns a sleep duration that no other process on the
// machine has in its command line ("3000.123456789"): a command that runs
// `sleep MARKER` can then be found in /proc from outside, whatever
// sandbox it runs in. The pids a sandboxed command records for itself
// ($$, $!) are those of its own pid namespace and mean nothing outside.
func SleepMarker() string {
	return fmt.Sprintf("3000.%09d", rand.IntN(1e9))
}

// ProcessesWith lists the live processes whose command line holds marker
// (bwrap's own processes among them, which carry the command in their
// arguments). Zombies are dead and do not count.
func ProcessesWith(marker string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if !strings.Contains(string(b), marker) {
			continue
		}
		if state, _, ok := procStat(e.Name()); ok && state != "Z" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// RequireNoProcessesWith fails when a process holding marker is still
// alive within d; it kills survivors so the test leaves nothing behind.
func RequireNoProcessesWith(t testing.TB, marker string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		left := ProcessesWith(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
				t.Errorf("process %d outlived the call: %q", pid, strings.ReplaceAll(string(b), "\x00", " "))
				syscall.Kill(pid, syscall.SIGKILL)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
