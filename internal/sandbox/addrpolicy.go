package sandbox

import (
	"net"
	"net/netip"
	"slices"
)

// special are address ranges that are not the public internet, beyond
// what netip's Is* methods cover.
var special = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "a special-purpose address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a special-purpose address"}, // carrier-grade NAT, often a cluster's pod network
	{netip.MustParsePrefix("192.0.0.0/24"), "a special-purpose address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a special-purpose address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a special-purpose address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"}, // deprecated, still routed by some networks
	{netip.MustParsePrefix("100::/64"), "a special-purpose address"},
	// A local-use NAT64 prefix (RFC 8215) is a local network's own
	// translator, which embeds the IPv4 address at a position that
	// depends on a prefix length only that network knows.
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local-use NAT64 address"},
}

// embedding is an IPv6 form that carries an IPv4 address: a command must
// not reach through it what it may not reach directly.
type embedding struct {
	prefix netip.Prefix
	form   string
	v4     func(b [16]byte) []netip.Addr
}

func v4At(b [16]byte, i int) netip.Addr { return netip.AddrFrom4([4]byte(b[i : i+4])) }

var embeddings = []embedding{
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible", func(b [16]byte) []netip.Addr { return []netip.Addr{v4At(b, 12)} }},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "an IPv4-translated", func(b [16]byte) []netip.Addr { return []netip.Addr{v4At(b, 12)} }},
	{netip.MustParsePrefix("64:ff9b::/96"), "a NAT64", func(b [16]byte) []netip.Addr { return []netip.Addr{v4At(b, 12)} }},
	{netip.MustParsePrefix("2002::/16"), "a 6to4", func(b [16]byte) []netip.Addr { return []netip.Addr{v4At(b, 2)} }},
	// Teredo: the server's address in bits 32-63, the client's mapped
	// address inverted in the last 32.
	{netip.MustParsePrefix("2001::/32"), "a Teredo", func(b [16]byte) []netip.Addr {
		client := v4At(b, 12).As4()
		for i := range client {
			client[i] ^= 0xff
		}
		return []netip.Addr{v4At(b, 4), netip.AddrFrom4(client)}
	}},
}

// embedded returns the IPv4 addresses an IPv6 address carries, and the
// form that carries them ("" when none).
func embedded(a netip.Addr) (string, []netip.Addr) {
	if !a.Is6() || a.Is4In6() {
		return "", nil
	}
	for _, e := range embeddings {
		if e.prefix.Contains(a) {
			return e.form, e.v4(a.As16())
		}
	}
	return "", nil
}

// forms are a and every IPv4 address it embeds: what the frontend and
// the host's own addresses are compared with.
func forms(a netip.Addr) []netip.Addr {
	a = a.Unmap().WithZone("")
	_, v4 := embedded(a)
	return append([]netip.Addr{a}, v4...)
}

// notPublic says why commands may not reach a ("a loopback address"),
// "" when they may. AllowNets opens a range in any form: an embedded
// address is judged as itself.
func (pol policy) notPublic(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	for _, p := range pol.allow {
		if p.Contains(a) {
			return ""
		}
	}
	switch {
	case a.IsLoopback():
		return "a loopback address"
	case a.IsUnspecified():
		return "an unspecified address"
	case a.IsMulticast():
		return "a multicast address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.IsPrivate():
		return "a private address"
	}
	for _, s := range special {
		if s.prefix.Contains(a) {
			return s.what
		}
	}
	form, v4 := embedded(a)
	for _, e := range v4 {
		if why := pol.notPublic(e); why != "" {
			return form + " address that embeds " + e.String() + ", " + why
		}
	}
	return ""
}

// ownAddrs are the addresses of this host's interfaces, read at each
// check: interfaces come and go. A service listening on every address
// answers on each of them, public ones included.
func ownAddrs() []netip.Addr {
	ifaddrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, ia := range ifaddrs {
		if p, err := netip.ParsePrefix(ia.String()); err == nil {
			out = append(out, p.Addr().Unmap().WithZone(""))
		}
	}
	return out
}

// isAny reports whether any form of a is among addrs.
func isAny(a netip.Addr, addrs []netip.Addr) (netip.Addr, bool) {
	for _, f := range forms(a) {
		if slices.Contains(addrs, f) {
			return f, true
		}
	}
	return netip.Addr{}, false
}
