package tools_test

// The network-on rows of issue 27 (sandbox_e2e_test.go runs them with the
// other network attacks): a listening socket opened without bind(), which
// the host then dials, and every address form the proxy must refuse.

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/internal/harness/fakeprovider"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
)

// hostAddress is an address of one of this machine's interfaces that is
// neither loopback nor link-local (what a listener on 0.0.0.0 answers on),
// or "" when there is none.
func hostAddress(t *testing.T) string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Logf("interface addresses: %v", err)
		return ""
	}
	for _, a := range addrs {
		p, err := netip.ParsePrefix(a.String())
		if err == nil && p.Addr().Is4() && !p.Addr().IsLoopback() && !p.Addr().IsLinkLocalUnicast() {
			return p.Addr().String()
		}
	}
	return ""
}

// netnsAttacks are the rows of issue 27's point 4. Each proxy row uses
// curl through the proxy the environment names; the destinations are a
// listener on every address of the host: at 127.0.0.2 (and the frontend's
// 127.0.0.1) written in each IPv6 form that embeds an IPv4 address, and
// at the host's own address.
func netnsAttacks(t *testing.T, w *attackWorld) []attack {
	public := listen(t, "0.0.0.0", "HTTP/1.0 200 OK\r\nContent-Length: 16\r\n\r\nLISTENER-SECRET\n")
	curl := func(host string) string {
		return fmt.Sprintf(`curl -sS --max-time 20 http://%s:%d/`, host, public)
	}
	as := []attack{
		{name: "listen without bind", command: listenCommand,
			leak: "ACCEPTED-FROM-HOST", blocked: []string{"NO-CONNECTION"}, needs: "python3"},
		{name: "ipv4-compatible ::127.0.0.2 via the proxy", command: curl("[::127.0.0.2]"),
			leak: "LISTENER-SECRET", blocked: []string{"embeds 127.0.0.2, a loopback address"}, needs: "curl"},
		{name: "ipv4-translated ::ffff:0:127.0.0.2 via the proxy", command: curl("[::ffff:0:127.0.0.2]"),
			leak: "LISTENER-SECRET", blocked: []string{"embeds 127.0.0.2, a loopback address"}, needs: "curl"},
		{name: "nat64 64:ff9b::127.0.0.2 via the proxy", command: curl("[64:ff9b::7f00:2]"),
			leak: "LISTENER-SECRET", blocked: []string{"embeds 127.0.0.2, a loopback address"}, needs: "curl"},
		{name: "nat64 of the frontend's host via the proxy", command: curl("[64:ff9b::7f00:1]"),
			leak: "LISTENER-SECRET", blocked: []string{"is the Temporal frontend's host (127.0.0.1)"}, needs: "curl"},
		{name: "local-use nat64 64:ff9b:1:: via the proxy", command: curl("[64:ff9b:1::7f00:2]"),
			leak: "LISTENER-SECRET", blocked: []string{"is a local-use NAT64 address"}, needs: "curl"},
		{name: "6to4 2002:7f00:2:: via the proxy", command: curl("[2002:7f00:2::]"),
			leak: "LISTENER-SECRET", blocked: []string{"embeds 127.0.0.2, a loopback address"}, needs: "curl"},
		{name: "teredo server 127.0.0.2 via the proxy", command: curl("[2001:0:7f00:2::]"),
			leak: "LISTENER-SECRET", blocked: []string{"embeds 127.0.0.2, a loopback address"}, needs: "curl"},
		{name: "teredo client 127.0.0.2 via the proxy", command: curl("[2001:0:808:808::80ff:fffd]"),
			leak: "LISTENER-SECRET", blocked: []string{"embeds 127.0.0.2, a loopback address"}, needs: "curl"},
		{name: "site-local fec0::1 via the proxy", command: curl("[fec0::1]"),
			leak: "LISTENER-SECRET", blocked: []string{"is a site-local address"}, needs: "curl"},
	}
	if h := hostAddress(t); h != "" {
		as = append(as, attack{name: "the host's own address via the proxy", command: curl(h),
			leak: "LISTENER-SECRET", blocked: []string{"is an address of this host"}, needs: "curl"})
	} else {
		t.Logf("the host's own address: skipped, no interface address but loopback")
	}
	return as
}

// listenCommand listens without bind() (the kernel picks a port on every
// address of the command's network namespace), tells the test which port
// in listen-port, and reports whether the host's connection arrived
// before the test says, in listen-tried, that it has dialled.
const listenCommand = `python3 -c "
import socket, os
s = socket.socket()
s.listen()
s.settimeout(1)
open('listen-port.tmp', 'w').write(str(s.getsockname()[1]))
os.rename('listen-port.tmp', 'listen-port')
for i in range(300):
    try:
        c, _ = s.accept()
        print('ACCEPTED-FROM-HOST', c.recv(64).decode(), flush=True)
        break
    except socket.timeout:
        if os.path.exists('listen-tried'):
            print('NO-CONNECTION: the host could not connect', flush=True)
            break
" 2>&1`

// dialListener waits for the port listenCommand writes into ws, dials
// it from the host on loopback, and then writes listen-tried. It runs
// until the port appears or done closes.
func dialListener(t *testing.T, ws string, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-time.After(50 * time.Millisecond):
		}
		b, err := os.ReadFile(filepath.Join(ws, "listen-port"))
		if err != nil {
			continue
		}
		port, _ := strconv.Atoi(string(bytes.TrimSpace(b)))
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 10*time.Second)
		if err == nil {
			c.Write([]byte("HOST-SECRET\n"))
			c.Close()
		}
		t.Logf("the host dialled the command's port %d: %v", port, err)
		os.WriteFile(filepath.Join(ws, "listen-tried"), nil, 0o644)
		return
	}
}

// TestNetworkOnFallbackAttacks runs the listen row and the proxy's
// positive path under the Landlock fallback, through the real worker:
// there commands share the worker's network namespace, and seccomp
// refuses listen.
func TestNetworkOnFallbackAttacks(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dev server and real worker processes")
	}
	w := newAttackWorld(t)
	model := fakeprovider.New(t)
	queue := "attack-landlock-network-" + testenv.Suffix()
	w.startWorker(t, queue, model.URL, "-sandbox", "landlock", "-sandbox-allow-nets", "127.0.0.3/32")
	as := available(t, []attack{
		{name: "listen without bind", command: listenCommand,
			leak: "ACCEPTED-FROM-HOST", blocked: []string{"PermissionError: [Errno 13] Permission denied"}, needs: "python3"},
		{name: "frontend grpc direct", command: fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%d && echo CONNECTED-TO-FRONTEND`, w.grpc),
			leak: "CONNECTED-TO-FRONTEND", blocked: []string{"Permission denied"}},
		{name: "allowed range through the proxy", command: fmt.Sprintf(`curl -sS http://127.0.0.3:%d/; echo "proxy: $HTTPS_PROXY"`, w.allowed),
			blocked: []string{"REACHED-ALLOWED", "proxy: http://127.0.0.1:"}, needs: "curl"},
	})
	w.refusedWithNetworkOn(t, model, queue, as)
}

// refusedWithNetworkOn makes the attacks as the calls of one run with
// network on, while the host dials what listenCommand listens on, and
// requires the run to end with stop and every attack refused.
func (w *attackWorld) refusedWithNetworkOn(t *testing.T, model *fakeprovider.Server, queue string, as []attack) {
	t.Helper()
	script(model, callsOf(as))
	done := make(chan struct{})
	go dialListener(t, w.ws, done)
	out, res := w.run(t, queue, &agent.SandboxConfig{Network: "on"})
	close(done)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	checkRefused(t, as, out)
}
