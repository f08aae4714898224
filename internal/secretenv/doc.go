// Package secretenv keeps the worker's own secrets away from the processes
// its tools start, whatever the tool sandbox (internal/sandbox) is set to.
// The worker calls Protect first thing, which makes it non-dumpable: other
// processes of its user cannot read its memory or its /proc/PID/environ,
// which keeps the variables it started with even after they are unset.
// It reads its configuration, then calls Unset, so that nothing it starts
// inherits a secret (-sandbox=none passes the rest of its environment on).
// Files names the files that hold secrets, for the sandbox to hide, and
// CheckPermissions warns about key files others may read.
package secretenv
