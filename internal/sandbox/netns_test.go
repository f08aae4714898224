package sandbox

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A network-on command that listens without bind(): under bwrap the port
// is in the command's own empty namespace, where the host cannot reach
// it; under Landlock, which shares the worker's, listen is refused.
func TestNetworkOnListenIsUnreachable(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("needs python3")
	}
	for mode, s := range modes(t, Config{}) {
		t.Run(string(mode), func(t *testing.T) {
			ws := reachable(t, s, t.TempDir())
			out, err := os.CreateTemp(t.TempDir(), "out")
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			p, err := s.Start(Spec{Shell: "/bin/bash", Dir: ws, Output: out, Network: true, Command: `python3 -c "
import socket, os
s = socket.socket()
s.listen()
s.settimeout(1)
open('port.tmp', 'w').write(str(s.getsockname()[1]))
os.rename('port.tmp', 'port')
for i in range(300):
    try:
        c, _ = s.accept()
        print('ACCEPTED', flush=True)
        break
    except socket.timeout:
        if os.path.exists('tried'):
            print('NO-CONNECTION', flush=True)
            break
" 2>&1`})
			if err != nil {
				t.Fatal(err)
			}
			// Dial the port once it is known (or until the command ends,
			// when listen was refused), then say so.
			for {
				b, err := os.ReadFile(filepath.Join(ws, "port"))
				if err == nil {
					c, err := net.DialTimeout("tcp", "127.0.0.1:"+string(bytes.TrimSpace(b)), 10*time.Second)
					if err == nil {
						c.Close()
					}
					t.Logf("dialled port %s: %v", b, err)
					os.WriteFile(filepath.Join(ws, "tried"), nil, 0o644)
					break
				}
				select {
				case <-p.done:
				case <-time.After(20 * time.Millisecond):
					continue
				}
				break
			}
			if _, err := p.Wait(); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(out.Name())
			t.Logf("%s", b)
			want := map[Mode]string{Bwrap: "NO-CONNECTION", Landlock: "PermissionError"}[mode]
			if strings.Contains(string(b), "ACCEPTED") || !strings.Contains(string(b), want) {
				t.Errorf("want %q, and no connection accepted:\n%s", want, b)
			}
		})
	}
}

// The positive path, through the bridge and the proxy with real traffic:
// a loopback server AllowNets opens answers, the namespace holds loopback
// alone, and HTTP_PROXY names the bridge.
func TestNetworkOnReachesAnAllowedServer(t *testing.T) {
	port := strconv.Itoa(answering(t, "127.0.0.2", "HTTP/1.0 200 OK\r\nContent-Length: 8\r\n\r\nREACHED\n", true))
	for mode, s := range modes(t, Config{AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}) {
		t.Run(string(mode), func(t *testing.T) {
			out, exit := run(t, s, t.TempDir(), `curl -sS --max-time 30 http://127.0.0.2:`+port+`/; curl -sS --max-time 30 http://[::127.0.0.1]:`+port+`/; echo; echo proxy=$HTTPS_PROXY; tail -n +3 /proc/net/dev | cut -d: -f1`, true)
			t.Logf("%s", out)
			wantIn(t, out, "REACHED", "::127.0.0.1 (::7f00:1) is an IPv4-compatible address that embeds 127.0.0.1, a loopback address", "proxy=http://127.0.0.1:")
			if mode == Bwrap {
				wantIn(t, out, "proxy="+bridgeURL)
				if ifaces := strings.Fields(out[strings.LastIndex(out, "proxy="):])[1:]; len(ifaces) != 1 || ifaces[0] != "lo" {
					t.Errorf("interfaces in the sandbox: %v, want lo alone", ifaces)
				}
			}
			if exit.Code != 0 {
				t.Errorf("exit %+v", exit)
			}
		})
	}
}

// bridgeCopy is this test binary under the bridge's name, in a directory
// commands of another user may read: it links package netbridge, and so
// is the bridge when run under that name (the worker's fallback).
func bridgeCopy(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "netbridge-") // t.TempDir's parent is root's alone
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	bridge := filepath.Join(dir, "agentloop-netbridge")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bridge, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bridge
}

// throughBridge makes s start network-on commands through the bridge even
// where the worker could listen inside (a root worker), as a worker of
// another user does.
func throughBridge(t *testing.T, s *Sandbox) {
	s.bridge, s.listensInside = bridgeCopy(t), false
}

// The command keeps its exit, 128+N for a signal as bwrap reports it, and
// its parent is the sandbox's pid 1: the bridge executed it in its own
// place, and nothing stands between it and the worker's proxy. That holds
// for commands of another user too (RunAs, whose prlimit runs as the
// bridge's command), given a bridge binary that user may read.
func TestNetworkOnBridgeKeepsTheExitAndServesRunAs(t *testing.T) {
	configs := map[string]Config{"worker's user": {Mode: Bwrap}}
	if os.Geteuid() == 0 {
		configs["nobody"] = Config{Mode: Bwrap, RunAs: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	for name, cfg := range configs {
		t.Run(name, func(t *testing.T) {
			s, err := New(cfg)
			if err != nil {
				t.Skipf("bwrap: %v", err)
			}
			t.Cleanup(func() { s.Close() })
			throughBridge(t, s)
			ws, err := os.MkdirTemp("", "netbridge-ws-")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(ws)
			os.Chmod(ws, 0o777)
			for command, want := range map[string]int{"exit 7": 7, "kill -9 $$": 128 + 9,
				"curl -sS -o /dev/null -w '%{http_code}' http://127.0.0.1:1/; echo; echo parent=$PPID procs=${GOMAXPROCS-unset}; exit 3": 3} {
				out, exit := run(t, s, ws, command, true)
				if exit.Code != want {
					t.Errorf("%q: exit %+v, want code %d; output:\n%s", command, exit, want, out)
				}
				if strings.HasPrefix(command, "curl") && (!strings.Contains(out, "403") || !strings.Contains(out, "parent=1 procs=unset\n")) {
					t.Errorf("%q: want the proxy's 403 through the bridge, pid 1 the shell's parent, and no GOMAXPROCS (the bridge's own):\n%s", command, out)
				}
			}
			// A run that sets GOMAXPROCS keeps it.
			out, err := os.CreateTemp(t.TempDir(), "out")
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			p, err := s.Start(Spec{Shell: "/bin/bash", Command: "echo procs=$GOMAXPROCS", Dir: ws, Output: out, Network: true, Env: map[string]string{"GOMAXPROCS": "3"}})
			if err != nil {
				t.Fatal(err)
			}
			p.Wait()
			if b, _ := os.ReadFile(out.Name()); string(b) != "procs=3\n" {
				t.Errorf("the run's GOMAXPROCS=3: the command printed %q", b)
			}
		})
	}
}

// A server that dies with the worker (StartPiped) and has network on runs
// its guard behind the bridge: the guard keeps its lifeline (the bridge
// passes on every descriptor but its own socket), the server holds 0-2
// only, and reaches the proxy.
func TestNetworkOnBridgeServesAPipedServer(t *testing.T) {
	if err := CloseInheritedOnExec(); err != nil { // what go test's launcher left open, as the worker does
		t.Fatal(err)
	}
	s, err := New(Config{Mode: Bwrap})
	if err != nil {
		t.Skipf("bwrap: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	throughBridge(t, s)
	p, err := s.StartPiped(Spec{Dir: reachable(t, s, t.TempDir()), Network: true, Args: []string{"/bin/bash", "-c",
		`echo up; read line; curl -sS -o /dev/null -w '%{http_code}\n' http://127.0.0.1:1/; ls /proc/$$/fd; echo "$line"`}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	r := bufio.NewReader(p.Stdout)
	if up, err := r.ReadString('\n'); up != "up\n" {
		t.Fatalf("the server did not start: %q, %v", up, err)
	}
	// The guard would have ended the namespace at once had it read its
	// lifeline's end: the server is still there to answer.
	if _, err := p.Stdin.Write([]byte("still here\n")); err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(r)
	if string(out) != "403\n0\n1\n2\nstill here\n" {
		t.Errorf("the server wrote %q; want the proxy's 403, descriptors 0-2 and its line back", out)
	}
	if exit, err := p.Wait(); err != nil || exit.Code != 0 {
		t.Errorf("exit %+v, %v", exit, err)
	}
}
