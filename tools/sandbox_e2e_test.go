package tools_test

// The attack suite of issue 17, through the real workflow: the real worker
// binary, running as an unprivileged user with secrets in its environment
// and its files, serves a run whose model asks for one bash call per attack
// (all in one turn). Sandboxed, every attack fails with a clear error and
// the run goes on; with -sandbox=none the same calls show what an operator
// gives up: most succeed, and the three aimed at the worker's own process
// are stopped only by its non-dumpable flag.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/internal/harness/fakeprovider"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
)

// How an attack fares without the sandbox.
const (
	works    = "works"    // it succeeds: the sandbox alone stops it
	dumpable = "dumpable" // the worker's PR_SET_DUMPABLE 0 stops it too
	notRun   = "not run"  // unbounded without the sandbox's limits
	startUp  = "start-up" // the worker's start-up stops it in every mode
)

type attack struct {
	name, command string
	timeout       float64
	leak          string   // in the output when the attack works
	blocked       []string // in the sandboxed output instead: the clear error
	unsandboxed   string
	needs         string // a program the attack uses, when not bash's own
}

func attacks(w *attackWorld) []attack {
	h := w.home
	return []attack{
		{name: "parent environ", command: `echo "parent: $(cat /proc/$PPID/comm)"; tr '\0' '\n' < /proc/$PPID/environ | grep -i api_key`,
			leak: w.apiKey, blocked: []string{"parent: bwrap"}, unsandboxed: dumpable},
		{name: "every environ", command: `grep -a -o -h 'VICTIM_SECRET=[a-z0-9-]*' /proc/[0-9]*/environ 2>/dev/null | sort -u; echo "scanned $(ls -d /proc/[0-9]* | wc -l) processes"`,
			leak: w.victimEnv, blocked: []string{"scanned"}, unsandboxed: works},
		{name: "worker memory", command: fmt.Sprintf(`head -c 16 /proc/%d/mem; cat /proc/%[1]d/maps | head -3`, w.workerPID),
			leak: w.bin, blocked: []string{"No such file or directory"}, unsandboxed: dumpable},
		{name: "gdb the worker", command: fmt.Sprintf(`gdb -batch -nx -p %d -ex 'info registers rip' 2>&1 | grep -E 'ptrace|^rip'`, w.workerPID),
			leak: "rip ", blocked: []string{"ptrace: No such process"}, unsandboxed: dumpable, needs: "gdb"},
		{name: "environment", command: `env | sort`,
			leak: "AGENTLOOP_CODEC_KEYS_FILE=" + w.keysFile, blocked: []string{"HOME=", "PATH="}, unsandboxed: works},
		{name: "codec keys file", command: "cat " + w.keysFile,
			leak: w.planted[w.keysFile], blocked: []string{"No such file or directory"}, unsandboxed: works},
		{name: "tool journal", command: "ls " + filepath.Join(h, ".local/state/agentloop/tool-journal"),
			leak: "entry", blocked: []string{"No such file or directory"}, unsandboxed: works},
		{name: "temporal profile", command: "cat " + filepath.Join(h, ".config/temporalio/temporal.toml"),
			leak: "PLANTED-TEMPORAL-PROFILE", blocked: []string{"No such file or directory"}, unsandboxed: works},
		{name: "tls key", command: "cat " + filepath.Join(h, ".config/temporalio/client.key"),
			leak: "PLANTED-TLS-KEY", blocked: []string{"No such file or directory"}, unsandboxed: works},
		{name: "write outside", command: fmt.Sprintf(`echo pwned > %s/pwned && echo "wrote outside"; echo pwned >> %s/.bashrc && echo "wrote the worker's .bashrc"`, w.outside, h),
			leak: "wrote", blocked: []string{"No such file or directory"}, unsandboxed: works},
		{name: "list processes", command: `ps -eo comm --no-headers | sort -u | tr '\n' ' '`,
			leak: "temporal", blocked: []string{"bash", "ps"}, unsandboxed: works},
		{name: "frontend grpc", command: fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%d && echo CONNECTED-TO-FRONTEND`, w.grpc),
			leak: "CONNECTED-TO-FRONTEND", blocked: []string{"Connection refused"}, unsandboxed: works},
		{name: "frontend http terminates a session", command: fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%d && printf 'POST /api/v1/namespaces/default/workflows/%s/terminate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}' >&3 && head -1 <&3`, w.http, w.victimWF),
			leak: "HTTP/1.1 200", blocked: []string{"Connection refused"}, unsandboxed: works},
		{name: "loopback listener", command: fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%d && head -1 <&3`, w.listener),
			leak: "LISTENER-SECRET", blocked: []string{"Connection refused"}, unsandboxed: works},
		{name: "inherited descriptor", command: `cat <&9`,
			leak: w.inherited, blocked: []string{"9: Bad file descriptor"}, unsandboxed: startUp},
		{name: "mass spawn", command: `for i in $(seq 100); do sleep 30 & done; echo "spawned $(jobs -p | wc -l) of 100"`, timeout: 8,
			leak: "spawned 100 of 100", blocked: []string{"Resource temporarily unavailable"}, unsandboxed: works},
		{name: "fork bomb", command: `b(){ b & b & }; b; sleep 10`, timeout: 3,
			blocked: []string{"Resource temporarily unavailable", "Command timed out after 3 seconds"}, unsandboxed: notRun},
		{name: "memory bomb", command: `v=$(head -c 150000000 /dev/zero | tr '\0' x); echo "held ${#v} bytes"`,
			leak: "held 150000000 bytes", blocked: []string{"cannot allocate"}, unsandboxed: works},
	}
}

// networkAttacks run with "network": "on": the proxy is there, yet
// loopback and the frontend stay out of reach.
func networkAttacks(w *attackWorld) []attack {
	return []attack{
		{name: "frontend grpc direct", command: fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%d && echo CONNECTED-TO-FRONTEND`, w.grpc),
			leak: "CONNECTED-TO-FRONTEND", blocked: []string{"Permission denied"}},
		{name: "frontend http via the proxy", command: fmt.Sprintf(`curl -sS -X POST -d '{}' http://127.0.0.1:%d/api/v1/namespaces/default/workflows/%s/terminate`, w.http, w.victimWF),
			leak: `{}`, blocked: []string{"127.0.0.1 (127.0.0.1) is the Temporal frontend's host"}, needs: "curl"},
		{name: "frontend grpc via CONNECT", command: fmt.Sprintf(`curl -sS https://127.0.0.1:%d/`, w.grpc),
			leak: "CONNECTED", blocked: []string{"403"}, needs: "curl"},
		{name: "loopback listener via the proxy", command: fmt.Sprintf(`curl -sS http://127.0.0.2:%d/`, w.listener2),
			leak: "LISTENER-SECRET", blocked: []string{"127.0.0.2 (127.0.0.2) is a loopback address"}, needs: "curl"},
		{name: "localhost via the proxy", command: fmt.Sprintf(`curl -sS http://localhost:%d/`, w.listener),
			leak: "LISTENER-SECRET", blocked: []string{"localhost (127.0.0.1) is the Temporal frontend's host"}, needs: "curl"},
		{name: "multipath tcp around landlock", command: fmt.Sprintf(`python3 -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262); s.connect(('127.0.0.1', %d)); print('CONNECTED-TO-FRONTEND')"`, w.grpc),
			leak: "CONNECTED-TO-FRONTEND", blocked: []string{"Permission denied"}, needs: "python3"},
		{name: "udp to loopback", command: `exec 3<>/dev/udp/127.0.0.1/53 && echo UDP-OPEN`,
			leak: "UDP-OPEN", blocked: []string{"Permission denied"}},
		{name: "allowed range through the proxy", command: fmt.Sprintf(`curl -sS http://127.0.0.3:%d/; echo "proxy: $HTTPS_PROXY"`, w.allowed),
			leak: "", blocked: []string{"REACHED-ALLOWED", "proxy: http://127.0.0.1:"}, needs: "curl"},
	}
}

// available drops the attacks whose program this machine lacks (as
// /usr/bin/NAME, where the sandbox can run it), saying so.
func available(t *testing.T, as []attack) []attack {
	var out []attack
	for _, a := range as {
		if a.needs != "" {
			if _, err := os.Stat("/usr/bin/" + a.needs); err != nil {
				t.Logf("%s: skipped, /usr/bin/%s is not installed", a.name, a.needs)
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

func callsOf(as []attack) []attackCall {
	var calls []attackCall
	for i, a := range as {
		calls = append(calls, attackCall{id: fmt.Sprintf("call_%02d", i), command: a.command, timeout: a.timeout})
	}
	return calls
}

func TestAttackSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dev server and real worker processes")
	}
	w := newAttackWorld(t)
	limits := []string{"-sandbox-procs", "64", "-sandbox-memory-mb", "128", "-sandbox-allow-nets", "127.0.0.3/32"}

	t.Run("sandboxed", func(t *testing.T) {
		model := fakeprovider.New(t)
		queue := "attack-sandboxed-" + testenv.Suffix()
		w.startWorker(t, queue, model.URL, limits...)
		as := available(t, attacks(w))
		script(model, callsOf(as))
		out, res := w.run(t, queue, nil)
		require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
		require.Equal(t, "The run went on.", agent.TextOf(res.Messages[len(res.Messages)-1].Content))
		checkRefused(t, as, out)
		requireUntouched(t, w)
		require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, w.victimStatus(t), "the victim session must still run")
	})

	// A worker as nobody reaches the proxy through the bridge process; a
	// root worker makes the listener inside the command's namespace itself.
	for name, user := range map[string]*syscall.Credential{"sandboxed with network on": nobody, "sandboxed with network on, worker as root": nil} {
		t.Run(name, func(t *testing.T) {
			model := fakeprovider.New(t)
			queue := "attack-network-" + testenv.Suffix()
			w.startWorkerAs(t, user, queue, model.URL, limits...)
			as := available(t, append(networkAttacks(w), netnsAttacks(t, w)...))
			w.refusedWithNetworkOn(t, model, queue, as)
			require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, w.victimStatus(t), "the victim session must still run")
		})
	}

	// What -sandbox=none gives up: the same calls, on the same machine.
	t.Run("unsandboxed", func(t *testing.T) {
		model := fakeprovider.New(t)
		queue := "attack-none-" + testenv.Suffix()
		w.startWorker(t, queue, model.URL, append(limits, "-sandbox", "none")...)
		var as []attack
		for _, a := range available(t, attacks(w)) {
			if a.unsandboxed != notRun {
				as = append(as, a)
			}
		}
		script(model, callsOf(as))
		out, res := w.run(t, queue, nil)
		require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
		for i, a := range as {
			got := out[fmt.Sprintf("call_%02d", i)]
			t.Logf("%s (%s):\n%s", a.name, a.unsandboxed, indent(got))
			switch a.unsandboxed {
			case works:
				if !strings.Contains(got, a.leak) {
					t.Errorf("%s: want the attack to work without the sandbox (%q) in:\n%s", a.name, a.leak, got)
				}
			case startUp:
				if strings.Contains(got, a.leak) || !strings.Contains(got, a.blocked[0]) {
					t.Errorf("%s: want the worker's start-up to stop it (%q) in:\n%s", a.name, a.blocked[0], got)
				}
			case dumpable:
				if strings.Contains(got, a.leak) || !strings.Contains(got, "ermi") && !strings.Contains(got, "not permitted") {
					t.Errorf("%s: want the non-dumpable worker to refuse:\n%s", a.name, got)
				}
			}
		}
		b, err := os.ReadFile(filepath.Join(w.outside, "pwned"))
		require.NoError(t, err, "without the sandbox the write outside lands")
		require.Equal(t, "pwned\n", string(b))
		require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, w.victimStatus(t), "without the sandbox a command terminates another session")
	})
}

// requireUntouched: nothing was written outside the workspace.
func requireUntouched(t *testing.T, w *attackWorld) {
	t.Helper()
	for _, p := range []string{filepath.Join(w.outside, "pwned"), filepath.Join(w.home, ".bashrc")} {
		_, err := os.Stat(p)
		require.True(t, os.IsNotExist(err), "%s was written", p)
	}
}

func (w *attackWorld) victimStatus(t *testing.T) enumspb.WorkflowExecutionStatus {
	d, err := w.c.DescribeWorkflow(context.Background(), w.victimWF, "")
	require.NoError(t, err)
	return d.RawResponse.GetWorkflowExecutionInfo().GetStatus()
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}
