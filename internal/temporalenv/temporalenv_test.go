package temporalenv

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/durable-agents/agentloop/internal/harness/testenv"
)

// pki is a CA with a server and a client certificate, as PEM files.
type pki struct {
	dir                                string
	caPEM, serverCertPEM, serverKeyPEM []byte
	clientCertPEM, clientKeyPEM        []byte
	caPath, clientCertPath             string
	clientKeyPath                      string
	ca                                 *x509.Certificate
	server                             tls.Certificate
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	p := &pki{dir: t.TempDir()}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "agentloop test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	p.ca, err = x509.ParseCertificate(caDER)
	require.NoError(t, err)
	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})

	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, dns []string, ips []net.IP) (certPEM, keyPEM []byte) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: cn},
			NotBefore:    time.Now().Add(-time.Hour),
			NotAfter:     time.Now().Add(time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
			DNSNames:     dns,
			IPAddresses:  ips,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, caKey)
		require.NoError(t, err)
		keyDER, err := x509.MarshalECPrivateKey(key)
		require.NoError(t, err)
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	}
	p.serverCertPEM, p.serverKeyPEM = leaf(2, "temporal.test", x509.ExtKeyUsageServerAuth, []string{"temporal.test"}, nil)
	p.clientCertPEM, p.clientKeyPEM = leaf(3, "agentloop-worker", x509.ExtKeyUsageClientAuth, nil, nil)
	p.server, err = tls.X509KeyPair(p.serverCertPEM, p.serverKeyPEM)
	require.NoError(t, err)

	write := func(name string, b []byte) string {
		path := filepath.Join(p.dir, name)
		require.NoError(t, os.WriteFile(path, b, 0o600))
		return path
	}
	p.caPath = write("ca.pem", p.caPEM)
	p.clientCertPath = write("client.pem", p.clientCertPEM)
	p.clientKeyPath = write("client.key", p.clientKeyPEM)
	return p
}

// env is a getenv over m that never reads the user's config file.
func env(t *testing.T, m map[string]string) func(string) string {
	t.Helper()
	if _, ok := m["TEMPORAL_CONFIG_FILE"]; !ok {
		m["TEMPORAL_CONFIG_FILE"] = filepath.Join(t.TempDir(), "absent.toml")
	}
	return func(k string) string { return m[k] }
}

// verifiesServer checks that o's TLS trusts the test server certificate
// under the name o verifies.
func verifiesServer(t *testing.T, o client.Options, p *pki) {
	t.Helper()
	cert, err := x509.ParseCertificate(p.server.Certificate[0])
	require.NoError(t, err)
	_, err = cert.Verify(x509.VerifyOptions{Roots: o.ConnectionOptions.TLS.RootCAs, DNSName: o.ConnectionOptions.TLS.ServerName})
	require.NoError(t, err)
}

func TestDefaults(t *testing.T) {
	o, err := ClientOptions(env(t, map[string]string{}))
	require.NoError(t, err)
	require.Equal(t, "localhost:7233", o.HostPort)
	require.Equal(t, "default", o.Namespace)
	require.Nil(t, o.ConnectionOptions.TLS)
	require.Nil(t, o.Credentials)
	require.Equal(t, "localhost:7233 namespace default, no TLS", Describe(o))
}

func TestAddressAndNamespace(t *testing.T) {
	o, err := ClientOptions(env(t, map[string]string{"TEMPORAL_ADDRESS": "temporal.internal:7233", "TEMPORAL_NAMESPACE": "agents"}))
	require.NoError(t, err)
	require.Equal(t, "temporal.internal:7233", o.HostPort)
	require.Equal(t, "agents", o.Namespace)
	require.Nil(t, o.ConnectionOptions.TLS)
}

func TestAPIKeyTurnsTLSOn(t *testing.T) {
	const key = "tmprl-api-key-PLANTED-1234"
	o, err := ClientOptions(env(t, map[string]string{
		"TEMPORAL_ADDRESS":   "us-east-1.aws.api.temporal.io:7233",
		"TEMPORAL_NAMESPACE": "agents.a1b2c",
		"TEMPORAL_API_KEY":   key,
	}))
	require.NoError(t, err)
	require.NotNil(t, o.Credentials)
	require.NotNil(t, o.ConnectionOptions.TLS, "an API key needs TLS")
	require.Nil(t, o.ConnectionOptions.TLS.RootCAs, "system roots")
	d := Describe(o)
	require.Equal(t, "us-east-1.aws.api.temporal.io:7233 namespace agents.a1b2c, TLS, API key", d)
	require.NotContains(t, d, key)

	// An API key over plaintext only when asked for (a local proxy).
	o, err = ClientOptions(env(t, map[string]string{"TEMPORAL_API_KEY": key, "TEMPORAL_TLS": "false"}))
	require.NoError(t, err)
	require.Nil(t, o.ConnectionOptions.TLS)
	require.True(t, o.ConnectionOptions.TLSDisabled)
	require.Equal(t, "localhost:7233 namespace default, no TLS, API key", Describe(o))
}

func TestTLSFlag(t *testing.T) {
	for _, v := range []string{"true", "TRUE", "1"} {
		o, err := ClientOptions(env(t, map[string]string{"TEMPORAL_TLS": v}))
		require.NoError(t, err)
		require.NotNil(t, o.ConnectionOptions.TLS, v)
	}
	for _, v := range []string{"false", "0"} {
		o, err := ClientOptions(env(t, map[string]string{"TEMPORAL_TLS": v}))
		require.NoError(t, err)
		require.Nil(t, o.ConnectionOptions.TLS, v)
	}
	_, err := ClientOptions(env(t, map[string]string{"TEMPORAL_TLS": "yes"}))
	require.EqualError(t, err, `TEMPORAL_TLS="yes": want true or false`)
	_, err = ClientOptions(env(t, map[string]string{"TEMPORAL_TLS_DISABLE_HOST_VERIFICATION": "on"}))
	require.ErrorContains(t, err, "TEMPORAL_TLS_DISABLE_HOST_VERIFICATION")
}

func TestMutualTLS(t *testing.T) {
	p := newPKI(t)
	for name, vars := range map[string]map[string]string{
		"sdk names": {
			"TEMPORAL_TLS_CLIENT_CERT_PATH":    p.clientCertPath,
			"TEMPORAL_TLS_CLIENT_KEY_PATH":     p.clientKeyPath,
			"TEMPORAL_TLS_SERVER_CA_CERT_PATH": p.caPath,
		},
		"cli names": {
			"TEMPORAL_TLS_CERT": p.clientCertPath,
			"TEMPORAL_TLS_KEY":  p.clientKeyPath,
			"TEMPORAL_TLS_CA":   p.caPath,
		},
		"cli data": {
			"TEMPORAL_TLS_CERT_DATA": string(p.clientCertPEM),
			"TEMPORAL_TLS_KEY_DATA":  string(p.clientKeyPEM),
			"TEMPORAL_TLS_CA_DATA":   string(p.caPEM),
		},
		"sdk data": {
			"TEMPORAL_TLS_CLIENT_CERT_DATA":    string(p.clientCertPEM),
			"TEMPORAL_TLS_CLIENT_KEY_DATA":     string(p.clientKeyPEM),
			"TEMPORAL_TLS_SERVER_CA_CERT_DATA": string(p.caPEM),
		},
	} {
		t.Run(name, func(t *testing.T) {
			vars["TEMPORAL_ADDRESS"] = "127.0.0.1:7233"
			vars["TEMPORAL_TLS_SERVER_NAME"] = "temporal.test"
			o, err := ClientOptions(env(t, vars))
			require.NoError(t, err)
			tc := o.ConnectionOptions.TLS
			require.NotNil(t, tc)
			require.Len(t, tc.Certificates, 1)
			leaf, err := x509.ParseCertificate(tc.Certificates[0].Certificate[0])
			require.NoError(t, err)
			require.Equal(t, "agentloop-worker", leaf.Subject.CommonName)
			require.Equal(t, "temporal.test", tc.ServerName)
			require.False(t, tc.InsecureSkipVerify)
			verifiesServer(t, o, p)
			require.Equal(t, "127.0.0.1:7233 namespace default, TLS (client certificate, custom CA, server name temporal.test)", Describe(o))
			require.NotContains(t, Describe(o), "BEGIN")
		})
	}
	// The SDK's name wins over the CLI's.
	o, err := ClientOptions(env(t, map[string]string{
		"TEMPORAL_TLS_SERVER_CA_CERT_PATH": p.caPath,
		"TEMPORAL_TLS_CA":                  filepath.Join(p.dir, "missing.pem"),
	}))
	require.NoError(t, err)
	require.NotNil(t, o.ConnectionOptions.TLS.RootCAs)
}

func TestTLSErrors(t *testing.T) {
	p := newPKI(t)
	garbage := filepath.Join(p.dir, "garbage.pem")
	require.NoError(t, os.WriteFile(garbage, []byte("not a certificate"), 0o600))
	for name, tc := range map[string]struct {
		vars map[string]string
		want string
	}{
		"cert without key":  {map[string]string{"TEMPORAL_TLS_CERT": p.clientCertPath}, "if either client cert or key path is present, other must be present too"},
		"key without cert":  {map[string]string{"TEMPORAL_TLS_KEY": p.clientKeyPath}, "other must be present too"},
		"missing cert file": {map[string]string{"TEMPORAL_TLS_CERT": filepath.Join(p.dir, "nope.pem"), "TEMPORAL_TLS_KEY": p.clientKeyPath}, "failed loading client cert/key path"},
		"mismatched pair":   {map[string]string{"TEMPORAL_TLS_CERT": p.caPath, "TEMPORAL_TLS_KEY": p.clientKeyPath}, "failed loading client cert/key path"},
		"missing CA file":   {map[string]string{"TEMPORAL_TLS_CA": filepath.Join(p.dir, "nope.pem")}, "failed reading server CA cert path"},
		"garbage CA":        {map[string]string{"TEMPORAL_TLS_CA": garbage}, "failed adding server CA to CA pool"},
		"TLS off with cert": {map[string]string{"TEMPORAL_TLS": "false", "TEMPORAL_TLS_CA": p.caPath}, "TEMPORAL_TLS=false, but"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ClientOptions(env(t, tc.vars))
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), "PRIVATE KEY")
		})
	}
}

func TestConfigFileProfile(t *testing.T) {
	p := newPKI(t)
	file := filepath.Join(t.TempDir(), "temporal.toml")
	require.NoError(t, os.WriteFile(file, []byte(`
[profile.default]
address = "localhost:7233"

[profile.prod]
address = "prod.example:7233"
namespace = "agents-prod"

[profile.prod.tls]
server_ca_cert_path = "`+p.caPath+`"
server_name = "temporal.test"
`), 0o600))
	o, err := ClientOptions(env(t, map[string]string{"TEMPORAL_CONFIG_FILE": file, "TEMPORAL_PROFILE": "prod"}))
	require.NoError(t, err)
	require.Equal(t, "prod.example:7233", o.HostPort)
	require.Equal(t, "agents-prod", o.Namespace)
	verifiesServer(t, o, p)

	// Variables override the file.
	o, err = ClientOptions(env(t, map[string]string{"TEMPORAL_CONFIG_FILE": file, "TEMPORAL_PROFILE": "prod", "TEMPORAL_NAMESPACE": "other"}))
	require.NoError(t, err)
	require.Equal(t, "other", o.Namespace)

	_, err = ClientOptions(env(t, map[string]string{"TEMPORAL_CONFIG_FILE": file, "TEMPORAL_PROFILE": "staging"}))
	require.ErrorContains(t, err, "unable to find profile staging")
}

func TestGRPCMetaFromOS(t *testing.T) {
	t.Setenv("TEMPORAL_CONFIG_FILE", filepath.Join(t.TempDir(), "absent.toml"))
	t.Setenv("TEMPORAL_ADDRESS", "")
	t.Setenv("TEMPORAL_GRPC_META_X_TENANT", "acme")
	o, err := FromOS()
	require.NoError(t, err)
	require.NotNil(t, o.HeadersProvider)
	h, err := o.HeadersProvider.GetHeaders(context.Background())
	require.NoError(t, err)
	require.Equal(t, "acme", h["x-tenant"])
}

// fakeFrontend is a TLS gRPC server answering the one call client.Dial
// makes, recording who called and with which headers.
type fakeFrontend struct {
	workflowservice.UnimplementedWorkflowServiceServer
	mu      sync.Mutex
	md      metadata.MD
	peerCNs []string
}

func (f *fakeFrontend) GetSystemInfo(ctx context.Context, _ *workflowservice.GetSystemInfoRequest) (*workflowservice.GetSystemInfoResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.md, _ = metadata.FromIncomingContext(ctx)
	if pr, ok := peer.FromContext(ctx); ok {
		if info, ok := pr.AuthInfo.(credentials.TLSInfo); ok {
			for _, c := range info.State.PeerCertificates {
				f.peerCNs = append(f.peerCNs, c.Subject.CommonName)
			}
		}
	}
	return &workflowservice.GetSystemInfoResponse{Capabilities: &workflowservice.GetSystemInfoResponse_Capabilities{}}, nil
}

// The options connect for real: mTLS against a server that requires a
// client certificate from the CA, with the API key as a bearer header.
func TestDialsMutualTLSServer(t *testing.T) {
	p := newPKI(t)
	pool := x509.NewCertPool()
	pool.AddCert(p.ca)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	front := &fakeFrontend{}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{p.server},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS12,
	})))
	workflowservice.RegisterWorkflowServiceServer(srv, front)
	go func() { _ = srv.Serve(ln) }()
	defer srv.Stop()

	vars := map[string]string{
		"TEMPORAL_ADDRESS":         ln.Addr().String(),
		"TEMPORAL_NAMESPACE":       "agents",
		"TEMPORAL_API_KEY":         "tmprl-key-123",
		"TEMPORAL_TLS_CERT":        p.clientCertPath,
		"TEMPORAL_TLS_KEY":         p.clientKeyPath,
		"TEMPORAL_TLS_CA":          p.caPath,
		"TEMPORAL_TLS_SERVER_NAME": "temporal.test",
	}
	o, err := ClientOptions(env(t, vars))
	require.NoError(t, err)
	o.Logger = testenv.Quiet()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.DialContext(ctx, o)
	require.NoError(t, err)
	c.Close()
	front.mu.Lock()
	require.Equal(t, []string{"agentloop-worker"}, front.peerCNs)
	require.Equal(t, []string{"Bearer tmprl-key-123"}, front.md.Get("authorization"))
	front.mu.Unlock()

	// Without the client certificate the server refuses the handshake.
	delete(vars, "TEMPORAL_TLS_CERT")
	delete(vars, "TEMPORAL_TLS_KEY")
	o, err = ClientOptions(env(t, vars))
	require.NoError(t, err)
	o.Logger = testenv.Quiet()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	_, err = client.DialContext(ctx2, o)
	require.Error(t, err)

	// Nor does a client that checks the wrong server name connect.
	vars["TEMPORAL_TLS_CERT"], vars["TEMPORAL_TLS_KEY"] = p.clientCertPath, p.clientKeyPath
	vars["TEMPORAL_TLS_SERVER_NAME"] = "other.test"
	o, err = ClientOptions(env(t, vars))
	require.NoError(t, err)
	o.Logger = testenv.Quiet()
	_, err = client.DialContext(ctx2, o)
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "certificate") || strings.Contains(err.Error(), "handshake"), err.Error())
}
