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
//     workspace read-write, a private /tmp, the run's saved outputs
//     read-only (Spec.ReadOnly), nothing else mounted; no
//     capabilities; the limits set with prlimit(2) before the command runs.
//     A root worker's commands run as DefaultUser on an idmapped mount of
//     the workspace (idmap.go).
//   - netns.go: "network on" under bubblewrap: the network namespace stays
//     empty (loopback only) but for a listener on loopback that leads to
//     the proxy: made by the worker itself where it may enter the
//     namespace (root), else by the bridge (package netbridge, the
//     agentloop-netbridge binary), which sends it to the worker and
//     executes the command in its own place; the worker serves it either
//     way. Nothing the command opens is reachable from the host, and
//     nothing of the host's from it but the proxy.
//   - lifeline.go: processes that die with the worker (MCP servers) run
//     under a guard (the same binary) that kills their sandbox when a pipe
//     only the worker writes to ends.
//   - landlock.go: the fallback where user namespaces are unavailable:
//     Landlock file-system, TCP and IPC-scope rules and seccomp filters
//     (seccomp.go, listenfilter.go) on the thread that starts the command,
//     every capability dropped (caps.go), a private temporary directory,
//     and the limits through prlimit(1). It refuses to run commands as
//     root. Commands share the worker's network namespace: with network
//     on, TCP may connect to the proxy's port alone and listen is refused.
//   - fds.go: the worker's inherited descriptors are marked close-on-exec.
//   - proxy.go, addrpolicy.go: what "network on" reaches: an HTTP proxy
//     in the worker that resolves once, dials the address it checked, and
//     refuses loopback, private, link-local, site-local, CGNAT and other
//     special addresses, the host's own, the Temporal frontend's, and
//     every IPv6 form that embeds a refused IPv4 address.
//   - hide.go: which paths are never visible (the worker's home, state,
//     key and credential files), and the environment a command gets.
package sandbox
