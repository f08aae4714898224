package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A worker that is a container's pid 1 (or a subreaper) inherits each
// sandbox's pid 1 when bwrap's monitor exits first; Wait reaps it, so no
// zombie is left per call. The test runs itself as a subreaper child.
func TestSandboxPID1IsReaped(t *testing.T) {
	if os.Getenv("SANDBOX_REAP_CHILD") == "1" {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			t.Fatal(err)
		}
		s, err := New(Config{Mode: Bwrap})
		if err != nil {
			t.Skip(err)
		}
		t.Cleanup(func() { s.Close() })
		for i := 0; i < 5; i++ {
			run(t, s, t.TempDir(), "sleep 0.05 & echo started", false)
		}
		time.Sleep(300 * time.Millisecond)
		fmt.Printf("zombies %d\n", zombieChildren())
		return
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("no bwrap")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSandboxPID1IsReaped$", "-test.v")
	cmd.Env = append(os.Environ(), "SANDBOX_REAP_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "zombies 0\n") {
		t.Errorf("%v:\n%s", err, out)
	}
}

// zombieChildren counts this process's children that are zombies.
func zombieChildren() int {
	n := 0
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[0] == "Z" && f[1] == strconv.Itoa(os.Getpid()) {
			n++
		}
	}
	return n
}
