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
