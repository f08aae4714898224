package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

func TestPolicyRefusesWhatIsNotThePublicInternet(t *testing.T) {
	pol := policy{frontends: []string{"localhost:7233", "203.0.113.9:7233"}, allow: []netip.Prefix{netip.MustParsePrefix("10.1.2.3/32")}}
	for hostport, want := range map[string]string{
		"127.0.0.1:80":             "the Temporal frontend's host", // localhost resolves here
		"localhost:443":            "the Temporal frontend's host",
		"127.0.0.2:80":             "loopback",
		"[::1]:80":                 "loopback",
		"10.0.0.1:443":             "private",
		"192.168.1.1:443":          "private",
		"[fc00::1]:443":            "private",
		"169.254.169.254:80":       "link-local", // cloud metadata
		"100.64.0.1:80":            "special-purpose",
		"[64:ff9b::a00:1]:80":      "a NAT64 address that embeds 10.0.0.1, a private address",
		"[::ffff:127.0.0.1]:80":    "the Temporal frontend's host",
		"0.0.0.0:7233":             "unspecified",
		"239.1.2.3:80":             "multicast",
		"203.0.113.9:443":          "the Temporal frontend's host", // any port of its host
		"10.1.2.3:443":             "",                             // allowed by -sandbox-allow-nets
		"93.184.215.14:443":        "",
		"[2606:4700::6810:85e5]:1": "",
	} {
		_, err := pol.check(context.Background(), hostport)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: refused: %v", hostport, err)
		case want != "" && (err == nil || !errors.Is(err, errRefused) || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: got %v, want refused as %s", hostport, err, want)
		}
	}
}

// The proxy tunnels (CONNECT) and forwards (http:// URLs) to what its
// policy allows and answers 403 with the reason otherwise.
func TestProxyTunnelsAndForwards(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello from "+r.Host) }))
	target := ln.Addr().String()
	px, err := startProxy(policy{allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}})
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()

	// http:// through the proxy.
	c := http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(mustURL(t, px.url))}}
	resp, err := c.Get("http://" + target + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello from "+target {
		t.Errorf("forwarded: %q", b)
	}

	// CONNECT, then HTTP over the tunnel.
	conn, err := net.Dial("tcp", strings.TrimPrefix(px.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\nGET / HTTP/1.0\r\nHost: tunnelled\r\n\r\n", target, target)
	got, _ := io.ReadAll(bufio.NewReader(conn))
	if !strings.HasPrefix(string(got), "HTTP/1.1 200 Connection established") || !strings.HasSuffix(string(got), "hello from tunnelled") {
		t.Errorf("tunnel: %q", got)
	}

	// Refused: 403 with the reason, for both forms.
	resp, err = c.Get("http://127.0.0.1:1/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "127.0.0.1 (127.0.0.1) is a loopback address") {
		t.Errorf("refused forward: %d %q", resp.StatusCode, b)
	}
	conn2, err := net.Dial("tcp", strings.TrimPrefix(px.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	fmt.Fprint(conn2, "CONNECT 10.0.0.1:443 HTTP/1.1\r\nHost: x\r\n\r\n")
	line, _ := bufio.NewReader(conn2).ReadString('\n')
	if !strings.HasPrefix(line, "HTTP/1.1 403") {
		t.Errorf("refused CONNECT: %q", line)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
