package sandbox

import (
	"context"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

// The worker's own connections on a run's behalf (webhooks) follow the
// proxy's policy: public addresses only, unless a range is allowed; with
// AllowLoopback, loopback too, except the frontend's port.
func TestEgressCheck(t *testing.T) {
	ctx := context.Background()
	strict := Egress{Frontends: []string{"203.0.113.7:7233"}} // a frontend on a public address, as Temporal Cloud's
	for hostport, want := range map[string]string{
		"169.254.169.254:80": "is a link-local address",
		"[fd00:ec2::254]:80": "is a private address",
		"10.1.2.3:443":       "is a private address",
		"127.0.0.1:8080":     "is a loopback address",
		"[::1]:8080":         "is a loopback address",
		"203.0.113.7:443":    "the Temporal frontend's host",
		"[::ffff:a01:203]:1": "is a private address",
	} {
		_, err := strict.Check(ctx, hostport)
		require.ErrorContains(t, err, want, hostport)
		require.True(t, IsRefused(err), hostport)
	}
	addr, err := strict.Check(ctx, "93.184.215.14:443")
	require.NoError(t, err)
	require.Equal(t, netip.MustParseAddrPort("93.184.215.14:443"), addr)

	allowed := Egress{AllowNets: []netip.Prefix{netip.MustParsePrefix("10.1.2.0/24")}}
	_, err = allowed.Check(ctx, "10.1.2.3:443")
	require.NoError(t, err)
	_, err = allowed.Check(ctx, "10.1.3.3:443")
	require.ErrorContains(t, err, "is a private address")

	loopback := Egress{Frontends: []string{"localhost:7233"}, AllowLoopback: true}
	_, err = loopback.Check(ctx, "127.0.0.1:8080")
	require.NoError(t, err)
	_, err = loopback.Check(ctx, "[::1]:7233")
	require.ErrorContains(t, err, "is the Temporal frontend")
	_, err = loopback.Check(ctx, "169.254.169.254:80")
	require.ErrorContains(t, err, "is a link-local address", "only loopback is opened")
}
