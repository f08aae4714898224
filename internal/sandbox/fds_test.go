package sandbox

import (
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Descriptors a worker inherited are not passed on to what it starts.
func TestInheritedDescriptorsCloseOnExec(t *testing.T) {
	fd, err := syscall.Open("/dev/null", syscall.O_RDONLY, 0) // no O_CLOEXEC: as a launcher's `9</secret`
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := CloseInheritedOnExec(); err != nil {
		t.Fatal(err)
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("descriptor %d: flags %#x, %v; want FD_CLOEXEC", fd, flags, err)
	}
}

// After the worker's start-up marking, neither what this process
// inherited (go test's own launcher may leave some) nor bwrap's own
// descriptors (--json-status-fd, --block-fd) reach the command: its shell
// holds 0-2 only. (Landlock's commands get what Go's exec passes, 0-2,
// and cannot read /proc to show it.)
func TestBwrapCommandsHoldThreeDescriptors(t *testing.T) {
	if err := CloseInheritedOnExec(); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Mode: Bwrap})
	if err != nil {
		t.Skipf("bwrap unavailable: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	bridged, err := New(Config{Mode: Bwrap})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bridged.Close() })
	throughBridge(t, bridged) // its socket pair's end must not reach the command
	for _, tc := range []struct {
		name    string
		s       *Sandbox
		network bool
	}{{"network off", s, false}, {"network on", s, true}, {"network on through the bridge", bridged, true}} {
		if tc.network && s.abi < 4 {
			continue
		}
		// `; true`: bash would otherwise exec ls in its own place.
		out, _ := run(t, tc.s, t.TempDir(), `ls /proc/$$/fd; true`, tc.network)
		if out != "0\n1\n2\n" {
			t.Errorf("%s: the shell holds descriptors\n%s", tc.name, out)
		}
	}
}
