package tools_test

// The attack suite's rows for a worker running as root (issue 27): its
// commands must hold none of root's rights in either mechanism. Under
// bwrap they run as an unprivileged host user on an idmapped workspace;
// the Landlock fallback refuses to start without -sandbox-user, and with
// it drops every capability and refuses packet, raw and netlink sockets.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/internal/harness/fakeprovider"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
)

func rootAttacks(w *attackWorld, mtu string) []attack {
	return []attack{
		{name: "inherited descriptor", command: `cat <&9`,
			leak: w.inherited, blocked: []string{"9: Bad file descriptor"}},
		{name: "packet socket", command: `python3 -c 'import socket; s=socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0x0300); s.bind(("lo", 0)); print("CAPTURING-LOOPBACK")' 2>&1 | tail -1`,
			leak: "CAPTURING-LOOPBACK", blocked: []string{"Permission denied"}, needs: "python3"},
		{name: "raw socket", command: `python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); print("RAW-OPEN")' 2>&1 | tail -1`,
			leak: "RAW-OPEN", blocked: []string{"Permission denied"}, needs: "python3"},
		{name: "netlink", command: `/usr/sbin/ip -o link show lo`,
			leak: "LOOPBACK", blocked: []string{"Permission denied"}},
		{name: "ip link set", command: `/usr/sbin/ip link set lo mtu ` + mtu + ` && echo MTU-SET`,
			leak: "MTU-SET", blocked: []string{"Permission denied"}},
		{name: "capabilities", command: `/usr/sbin/capsh --print | grep -E '^(Current:|Bounding)|no-new-privs'`,
			leak: "cap_", blocked: []string{"Current: =\n", "Bounding set =\n", "no-new-privs=1"}},
	}
}

func bwrapRootAttacks(w *attackWorld, secret string) []attack {
	return []attack{
		{name: "inherited descriptor", command: `cat <&9`,
			leak: w.inherited, blocked: []string{"9: Bad file descriptor"}},
		{name: "root-only file under /etc", command: `echo "uid $(id -u)"; cat ` + secret,
			leak: "ROOT-ONLY-SECRET", blocked: []string{"uid 65534", "Permission denied"}},
		{name: "shadow", command: `head -c 5 /etc/shadow`,
			leak: "root:", blocked: []string{"Permission denied"}},
		{name: "root's file in the workspace", command: `echo two >> by-file-tool && echo appended; echo x > made && echo created`,
			blocked: []string{"appended", "created"}},
	}
}

func TestAttackSuiteAsRoot(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dev server and real worker processes")
	}
	w := newAttackWorld(t)
	mtu, err := os.ReadFile("/sys/class/net/lo/mtu")
	require.NoError(t, err)

	// The same rows but the capabilities one (a worker without
	// CAP_SETPCAP cannot empty the bounding set, nor needs to) for a worker
	// that is not root: dropping what it does not hold must not stop it.
	// First: the root workers below make the content store root's.
	t.Run("landlock, worker as nobody", func(t *testing.T) {
		model := fakeprovider.New(t)
		queue := "attack-nobody-landlock-" + testenv.Suffix()
		w.startWorkerAs(t, nobody, queue, model.URL, "-sandbox", "landlock")
		var as []attack
		for _, a := range available(t, rootAttacks(w, strings.TrimSpace(string(mtu)))) {
			if a.name != "capabilities" {
				as = append(as, a)
			}
		}
		script(model, callsOf(as))
		out, res := w.run(t, queue, nil)
		require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
		checkRefused(t, as, out)
	})

	t.Run("landlock refuses root commands", func(t *testing.T) {
		cmd := w.workerCommand(t, nil, "attack-root-refused-"+testenv.Suffix(), "http://127.0.0.1:1", "-sandbox", "landlock")
		done := make(chan struct{})
		var out []byte
		go func() { out, _ = cmd.CombinedOutput(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			cmd.Process.Kill()
			<-done
			t.Fatalf("the worker started as root with -sandbox=landlock and no -sandbox-user:\n%s", out)
		}
		require.Contains(t, string(out), "-sandbox-user")
		require.NotEqual(t, 0, cmd.ProcessState.ExitCode())
	})

	t.Run("landlock with -sandbox-user", func(t *testing.T) {
		model := fakeprovider.New(t)
		queue := "attack-root-landlock-" + testenv.Suffix()
		w.startWorkerAs(t, nil, queue, model.URL, "-sandbox", "landlock", "-sandbox-user", "65534:65534")
		as := available(t, rootAttacks(w, strings.TrimSpace(string(mtu))))
		script(model, callsOf(as))
		out, res := w.run(t, queue, nil)
		require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
		checkRefused(t, as, out)
	})

	t.Run("bwrap", func(t *testing.T) {
		secret, err := os.CreateTemp("/etc", "agentloop-root-only-")
		require.NoError(t, err)
		t.Cleanup(func() { os.Remove(secret.Name()) })
		_, err = secret.WriteString("ROOT-ONLY-SECRET\n") // 0600, root's
		require.NoError(t, err)
		require.NoError(t, secret.Close())
		ws := filepath.Join(w.base, "root-ws") // root's, as the file tools of a root worker leave it
		require.NoError(t, os.Mkdir(ws, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ws, "by-file-tool"), []byte("one\n"), 0o644))

		model := fakeprovider.New(t)
		queue := "attack-root-bwrap-" + testenv.Suffix()
		w.startWorkerAs(t, nil, queue, model.URL, "-sandbox", "bwrap")
		as := bwrapRootAttacks(w, secret.Name())
		script(model, callsOf(as))
		out, res := w.runIn(t, queue, ws, nil)
		require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
		checkRefused(t, as, out)
		b, err := os.ReadFile(filepath.Join(ws, "by-file-tool"))
		require.NoError(t, err)
		require.Equal(t, "one\ntwo\n", string(b))
		for _, name := range []string{"by-file-tool", "made"} {
			var st syscall.Stat_t
			require.NoError(t, syscall.Stat(filepath.Join(ws, name), &st))
			require.Equal(t, [2]uint32{0, 0}, [2]uint32{st.Uid, st.Gid}, "%s stays root's on disk", name)
		}
	})
}
