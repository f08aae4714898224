// Package sandbox runs the processes of the bash tool and stdio MCP
// servers where they cannot reach the worker's secrets or the Temporal
// server, within resource limits. The worker holds fleet credentials and sits next to the Temporal
// frontend, while the commands it runs come from a model that may be
// reading injected instructions.
//
// Start reading at sandbox.go: Config (what the worker sets once), New
// (which picks a mechanism and refuses when none works) and Spec (one
// command); then process.go (how a command is stopped and waited for),
// limits.go and flags.go (the worker's -sandbox flags), piped.go (a
// long-lived server with stdin/stdout pipes, the same set-up). The
// mechanisms:
//
//   - bwrap.go: bubblewrap, the default. Own user, pid, mount, IPC, UTS
//     and network namespaces; the system directories read-only, the
//     workspace read-write, a private /tmp, nothing else mounted; no
//     capabilities; the limits set with prlimit(2) before the command runs.
//   - landlock.go: the fallback where user namespaces are unavailable:
//     Landlock file-system, TCP and IPC-scope rules and a seccomp filter
//     (seccomp.go) on the thread that starts the command, a private
//     temporary directory, and the limits through prlimit(1).
//   - proxy.go: what "network on" reaches: an HTTP proxy in the worker
//     that refuses loopback, private and link-local addresses and the
//     Temporal frontend; Landlock lets the command connect to that one
//     port and nothing else.
//   - hide.go: which paths are never visible (the worker's home, state,
//     key and credential files), and the environment a command gets.
package sandbox
