package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// proxy is what a command with network on reaches the network through:
// an HTTP proxy (CONNECT for https, absolute URLs for http) that resolves
// each destination once, refuses what is not the public internet
// (addrpolicy.go) and dials the address it checked, so a name that
// resolves differently a second time cannot steer it inside. It listens
// on the worker's loopback, which Landlock commands may connect to and to
// nothing else, and on a Unix socket, where the worker forwards what bwrap
// commands send to the listener in their own network namespace (netns.go). The command's
// environment names it in HTTP_PROXY, HTTPS_PROXY and ALL_PROXY.
type proxy struct {
	url    string
	port   uint16
	socket string // the same proxy on a Unix socket, for bwrap's bridge
	pol    policy
	srv    *http.Server
	// forward carries http:// requests, one connection each: a kept-alive
	// one would outlive the command that asked for it.
	forward *http.Transport

	mu      sync.Mutex
	closed  bool
	tunnels map[net.Conn]bool // both ends of each CONNECT, which srv no longer tracks
}

// proxyFor starts the proxy on first use; "", 0 when network is off.
func (s *Sandbox) proxyFor(network bool) (string, uint16, error) {
	if !network {
		return "", 0, nil
	}
	p, err := s.theProxy()
	if err != nil {
		return "", 0, err
	}
	return p.url, p.port, nil
}

// Close stops the network proxy, when a command started it: its
// listeners and connections, tunnels included. Commands that still run
// lose the network, and a later one with network on fails to start. It
// also lets go of the workspaces' kept mount namespaces (mountns.go).
func (s *Sandbox) Close() error {
	if s.idmap != nil {
		s.idmap.close()
	}
	s.proxyOnce.Do(func() { s.proxyErr = errors.New("sandbox: network proxy: the sandbox is closed") })
	if s.proxy == nil {
		return nil
	}
	return s.proxy.Close()
}

func (s *Sandbox) theProxy() (*proxy, error) {
	s.proxyOnce.Do(func() {
		s.proxy, s.proxyErr = startProxy(policy{frontends: s.cfg.Frontends, allow: s.cfg.AllowNets})
	})
	return s.proxy, s.proxyErr
}

func startProxy(pol policy) (*proxy, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("sandbox: network proxy: %w", err)
	}
	// The socket's directory is named for the worker's pid, so a later
	// worker removes it when this one was SIGKILLed (sweepStale). Its
	// user may differ from the worker's (RunAs): both may be searched and
	// connected to by anyone, as the TCP port may.
	dir, err := os.MkdirTemp("", tempPattern("proxy"))
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	var uln net.Listener
	if err == nil {
		uln, err = net.Listen("unix", filepath.Join(dir, "proxy.sock"))
	}
	if err == nil {
		err = os.Chmod(filepath.Join(dir, "proxy.sock"), 0o666)
	}
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("sandbox: network proxy: %w", err)
	}
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	p := &proxy{url: "http://127.0.0.1:" + strconv.Itoa(int(port)), port: port, socket: filepath.Join(dir, "proxy.sock"), pol: pol,
		tunnels: map[net.Conn]bool{}}
	p.forward = &http.Transport{DialContext: p.dial, Proxy: nil, DisableKeepAlives: true}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	go p.srv.Serve(ln)  // until Close, for the life of the worker
	go p.srv.Serve(uln) // likewise
	return p, nil
}

// Close stops the proxy: its listeners, its connections and its socket's
// directory.
func (p *proxy) Close() error {
	err := p.srv.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.tunnels {
		c.Close()
	}
	p.mu.Unlock()
	p.forward.CloseIdleConnections()
	if rmErr := os.RemoveAll(filepath.Dir(p.socket)); err == nil {
		err = rmErr
	}
	return err
}

// track keeps a tunnel's connections until untrack, for Close; false when
// the proxy is closed already.
func (p *proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range conns {
		p.tunnels[c] = true
	}
	return true
}

func (p *proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.tunnels, c)
	}
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Scheme != "http" {
		http.Error(w, "agentloop sandbox proxy: send http:// URLs or CONNECT", http.StatusBadRequest)
		return
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = pr.In.URL
			pr.Out.Host = pr.In.Host
		},
		Transport: p.forward,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			refuse(w, err)
		},
	}
	rp.ServeHTTP(w, r)
}

// tunnel serves CONNECT host:port: one TCP stream to a checked address.
func (p *proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	up, err := p.dial(r.Context(), "tcp", r.Host)
	if err != nil {
		refuse(w, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "agentloop sandbox proxy: cannot tunnel", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	defer p.untrack(down, up)
	if !p.track(down, up) {
		down.Close()
		up.Close()
		return
	}
	down.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
	go func() {
		io.Copy(up, buf) // what the client sent after the request, then the rest
		up.(*net.TCPConn).CloseWrite()
	}()
	io.Copy(down, up)
	down.Close()
	up.Close()
}

// errRefused marks a destination the policy refuses.
var errRefused = errors.New("refused")

func refuse(w http.ResponseWriter, err error) {
	if errors.Is(err, errRefused) {
		http.Error(w, "agentloop sandbox proxy: "+err.Error(), http.StatusForbidden)
		return
	}
	http.Error(w, "agentloop sandbox proxy: "+err.Error(), http.StatusBadGateway)
}

// dial connects to the checked address of hostport, never to a name the
// resolver might answer differently a second time.
func (p *proxy) dial(ctx context.Context, _, hostport string) (net.Conn, error) {
	addr, err := p.pol.check(ctx, hostport)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: 30 * time.Second}
	return d.DialContext(ctx, "tcp", addr.String())
}

// policy decides which destinations network on may reach.
type policy struct {
	frontends []string // host:port of the Temporal frontend
	allow     []netip.Prefix
}

// check resolves hostport and returns the address to dial, or why not.
func (pol policy) check(ctx context.Context, hostport string) (netip.AddrPort, error) {
	host, port, err := splitHostPort(hostport)
	if err != nil {
		return netip.AddrPort{}, err
	}
	addrs, err := resolve(ctx, host)
	if err != nil {
		return netip.AddrPort{}, err
	}
	// Every address the name resolves to must pass, not only the one
	// dialled: a refused one means the name is aimed inside.
	frontend, own := pol.frontendAddrs(ctx), ownAddrs()
	for _, a := range addrs {
		if f, ok := isAny(a, frontend); ok {
			return netip.AddrPort{}, fmt.Errorf("%w: %s (%s) is the Temporal frontend's host (%s)", errRefused, host, a, f)
		}
		if why := pol.notPublic(a); why != "" {
			return netip.AddrPort{}, fmt.Errorf("%w: %s (%s) is %s", errRefused, host, a, why)
		}
		if o, ok := isAny(a, own); ok { // whatever AllowNets says
			return netip.AddrPort{}, fmt.Errorf("%w: %s (%s) is an address of this host (%s)", errRefused, host, a, o)
		}
	}
	return netip.AddrPortFrom(addrs[0], port), nil
}

// splitHostPort splits a proxy request's or webhook's host:port, refusing
// what is not one.
func splitHostPort(hostport string) (string, uint16, error) {
	host, portText, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", 0, fmt.Errorf("%w: %q is not host:port", errRefused, hostport)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return "", 0, fmt.Errorf("%w: bad port in %q", errRefused, hostport)
	}
	return host, uint16(port), nil
}

// frontendAddrs resolves the frontend hosts now: their addresses may
// change while the worker runs.
func (pol policy) frontendAddrs(ctx context.Context) []netip.Addr {
	var out []netip.Addr
	for _, hp := range pol.frontends {
		host, _, err := net.SplitHostPort(hp)
		if err != nil {
			host = hp
		}
		addrs, _ := resolve(ctx, host)
		out = append(out, addrs...)
	}
	return out
}

// resolve returns host's addresses (host may be an address itself).
func resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	for i := range addrs {
		addrs[i] = addrs[i].Unmap()
	}
	return addrs, nil
}
