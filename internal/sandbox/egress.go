package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// Egress is the address policy of the sandbox proxy for connections the
// worker itself makes on a run's behalf (webhook hooks): a URL a run names
// must not reach the Temporal frontend, this host, loopback, private,
// link-local (cloud metadata) or other special addresses, unless AllowNets
// opens a range.
type Egress struct {
	// Frontends are the Temporal frontend's host:port addresses.
	Frontends []string
	// AllowNets are ranges outside the public internet that may be
	// reached anyway.
	AllowNets []netip.Prefix
	// AllowLoopback lets connections reach loopback addresses, except the
	// frontend's own host:port: for tests, whose servers all listen
	// there.
	AllowLoopback bool
}

// Check resolves hostport and returns the address to dial, or why not.
func (e Egress) Check(ctx context.Context, hostport string) (netip.AddrPort, error) {
	host, port, err := splitHostPort(hostport)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if e.AllowLoopback {
		addrs, err := resolve(ctx, host)
		if err != nil {
			return netip.AddrPort{}, err
		}
		if loopbackOnly(addrs) {
			dest := netip.AddrPortFrom(addrs[0], port)
			if e.isFrontend(ctx, dest) {
				return netip.AddrPort{}, fmt.Errorf("%w: %s is the Temporal frontend", errRefused, hostport)
			}
			return dest, nil
		}
	}
	return policy{frontends: e.Frontends, allow: e.AllowNets}.check(ctx, hostport)
}

// DialContext dials the checked address of addr, never a name the resolver
// might answer differently a second time (net/http.Transport.DialContext).
func (e Egress) DialContext(ctx context.Context, _, addr string) (net.Conn, error) {
	dest, err := e.Check(ctx, addr)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: 30 * time.Second}
	return d.DialContext(ctx, "tcp", dest.String())
}

// IsLoopback reports whether host names only loopback addresses.
func IsLoopback(ctx context.Context, host string) bool {
	addrs, err := resolve(ctx, host)
	return err == nil && loopbackOnly(addrs)
}

func loopbackOnly(addrs []netip.Addr) bool {
	for _, a := range addrs {
		if !a.Unmap().IsLoopback() {
			return false
		}
	}
	return len(addrs) > 0
}

func (e Egress) isFrontend(ctx context.Context, dest netip.AddrPort) bool {
	for _, hp := range e.Frontends {
		host, port, err := splitHostPort(hp)
		if err != nil || port != dest.Port() {
			continue
		}
		addrs, _ := resolve(ctx, host)
		for _, a := range addrs {
			if a.Unmap() == dest.Addr().Unmap() || a.IsLoopback() && dest.Addr().IsLoopback() {
				return true
			}
		}
	}
	return false
}

// IsRefused reports whether err is the policy's refusal of a destination.
func IsRefused(err error) bool { return errors.Is(err, errRefused) }
