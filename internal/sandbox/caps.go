package sandbox

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// dropCapabilities takes every capability from the calling thread, and so
// from the processes it starts: the bounding set (when the thread may
// change it), the ambient, inheritable, permitted and effective sets.
// keepSetID keeps CAP_SETUID and CAP_SETGID in the permitted and
// effective sets, which the child needs to switch to Config.RunAs; that
// switch (from root to another uid) clears both sets, so the command
// still starts with none. The caller has locked the goroutine to the
// thread and never unlocks it: capabilities are per thread.
//
// Under bwrap the command gets no capabilities from --cap-drop ALL; the
// Landlock fallback has no such step, and a worker running as root would
// otherwise hand its commands CAP_NET_ADMIN and CAP_NET_RAW on the host's
// own network (an AF_PACKET socket reads the worker's model calls).
func dropCapabilities(keepSetID bool) error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("sandbox: capget: %w", err)
	}
	if has(data, unix.CAP_SETPCAP) {
		for c := 0; c < 64; c++ { // version 3 holds 64; the kernel knows fewer
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err == unix.EINVAL {
				break // c is past the kernel's last capability
			} else if err != nil {
				return fmt.Errorf("sandbox: dropping capability %d from the bounding set: %w", c, err)
			}
		}
	}
	// Without CAP_SETPCAP the bounding set stays, and cannot help: with
	// no_new_privs (restrictThread) an exec grants no file capabilities.
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("sandbox: clearing ambient capabilities: %w", err)
	}
	var keep [2]uint32
	if keepSetID {
		for _, c := range []int{unix.CAP_SETUID, unix.CAP_SETGID} {
			if has(data, c) {
				keep[c/32] |= 1 << (c % 32)
			}
		}
	}
	for i := range data {
		data[i] = unix.CapUserData{Effective: keep[i], Permitted: keep[i]}
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("sandbox: capset: %w", err)
	}
	return nil
}

// holds says whether the calling thread has capability c in effect.
func holds(c int) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	return unix.Capget(&hdr, &data[0]) == nil && has(data, c)
}

// has says whether capability c is in the effective set.
func has(data [2]unix.CapUserData, c int) bool {
	return data[c/32].Effective&(1<<(c%32)) != 0
}
