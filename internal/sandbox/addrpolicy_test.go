package sandbox

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// Every IPv6 form that embeds an IPv4 address is judged by the address it
// embeds; the host's own addresses are refused whatever AllowNets says.
func TestPolicyRefusesEveryFormOfAnAddress(t *testing.T) {
	pol := policy{allow: []netip.Prefix{netip.MustParsePrefix("10.9.0.0/16")}}
	for addr, want := range map[string]string{
		"::127.0.0.1":                  "embeds 127.0.0.1, a loopback address", // IPv4-compatible
		"::10.0.0.1":                   "embeds 10.0.0.1, a private address",
		"::8.8.8.8":                    "",
		"::ffff:0:127.0.0.1":           "embeds 127.0.0.1, a loopback address", // IPv4-translated (SIIT)
		"::ffff:0:8.8.8.8":             "",
		"64:ff9b::7f00:1":              "embeds 127.0.0.1, a loopback address", // NAT64 well-known
		"64:ff9b::a9fe:a9fe":           "embeds 169.254.169.254, a link-local address",
		"64:ff9b::808:808":             "",
		"64:ff9b:1::7f00:1":            "local-use NAT64", // every prefix length is possible
		"64:ff9b:1:7f00:1::":           "local-use NAT64",
		"2002:7f00:1::1":               "embeds 127.0.0.1, a loopback address", // 6to4
		"2002:a00:1::1":                "embeds 10.0.0.1, a private address",
		"2002:808:808::1":              "",
		"2001:0:7f00:1::1":             "embeds 127.0.0.1, a loopback address", // Teredo server
		"2001:0:808:808::80ff:fffe":    "embeds 127.0.0.1, a loopback address", // Teredo client, inverted
		"2001:0:808:808:0:0:f7f7:f7f7": "",
		"fec0::1":                      "site-local",
		"fc00::1":                      "private",
		"fd00::2":                      "private",
		"fe80::1":                      "link-local",
		"ff02::1":                      "multicast",
		"::":                           "unspecified",
		"::1":                          "loopback",
		"100.64.0.1":                   "special-purpose",
		"::10.9.0.1":                   "", // allowed: AllowNets is judged on the embedded address too
		"10.9.1.1":                     "",
		"2606:4700::6810:85e5":         "",
	} {
		a := netip.MustParseAddr(addr)
		got := pol.notPublic(a)
		if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Errorf("%s: got %q, want %q", addr, got, want)
		}
	}
}

func TestPolicyRefusesTheHostsOwnAddresses(t *testing.T) {
	own := ownAddrs()
	if len(own) == 0 {
		t.Skip("no interface addresses")
	}
	for _, a := range own {
		pol := policy{allow: []netip.Prefix{netip.PrefixFrom(a, a.BitLen())}}
		host := a.String()
		if a.Is6() {
			host = "[" + host + "]"
		}
		_, err := pol.check(context.Background(), host+":443")
		if err == nil || !errors.Is(err, errRefused) || !strings.Contains(err.Error(), "an address of this host") {
			t.Errorf("%s: got %v, want refused as an address of this host", a, err)
		}
	}
}
