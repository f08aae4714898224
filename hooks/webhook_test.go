package hooks

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/internal/sandbox"
)

func TestSignAndVerify(t *testing.T) {
	secret, body := []byte("s3cret"), []byte(`{"hook":"beforeToolCall"}`)
	sig := Sign(secret, body)
	// HMAC-SHA256 of the body under the secret, as `openssl dgst -sha256
	// -hmac s3cret` prints it.
	require.Equal(t, "sha256=288251b2587dfeea519962cf5ea37434bfca531ea95afc413381dc50d1e65f9d", sig)
	require.True(t, Verify(secret, body, sig))
	require.False(t, Verify([]byte("other"), body, sig))
	require.False(t, Verify(secret, append(body, ' '), sig))
}

// A loopback server that checks the signature and answers what answer
// returns; it counts the requests.
func signedServer(t *testing.T, secret []byte, answer func(body []byte) (int, string)) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		body, _ := io.ReadAll(r.Body)
		if !Verify(secret, body, r.Header.Get(SignatureHeader)) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		if r.Header.Get(DeliveryHeader) != "run/1" || r.Header.Get(EventHeader) != "beforeToolCall" {
			http.Error(w, "missing headers", http.StatusBadRequest)
			return
		}
		code, text := answer(body)
		w.WriteHeader(code)
		_, _ = io.WriteString(w, text)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestWebhookPost(t *testing.T) {
	secret := []byte("team-secret")
	srv, n := signedServer(t, secret, func(body []byte) (int, string) {
		switch {
		case strings.Contains(string(body), "fail"):
			return http.StatusServiceUnavailable, "down for a moment"
		case strings.Contains(string(body), "refuse"):
			return http.StatusForbidden, "no"
		}
		return http.StatusOK, `{"block":true,"reason":"policy"}`
	})
	w := NewWebhooks(sandbox.Egress{}, true)
	w.Secrets["team"] = secret
	hook := agent.WebhookHook{URL: srv.URL + "/before", SecretRef: "team"}
	ctx := context.Background()

	answer, err := w.Post(ctx, hook, "beforeToolCall", "run/1", []byte(`{"args":{}}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"block":true,"reason":"policy"}`, string(answer))

	_, err = w.Post(ctx, hook, "beforeToolCall", "run/1", []byte(`{"args":"fail"}`))
	require.ErrorContains(t, err, "503 Service Unavailable: down for a moment")
	var p *PermanentError
	require.False(t, errors.As(err, &p), "a 5xx is worth a retry")

	_, err = w.Post(ctx, hook, "beforeToolCall", "run/1", []byte(`{"args":"refuse"}`))
	require.ErrorContains(t, err, "403 Forbidden: no")
	require.ErrorAs(t, err, &p, "a 4xx is not")

	_, err = w.Post(ctx, agent.WebhookHook{URL: hook.URL, SecretRef: "other"}, "beforeToolCall", "run/1", nil)
	require.ErrorContains(t, err, `this worker has no webhook secret "other"`)
	require.False(t, errors.As(err, &p), "another worker of the fleet may hold it")
	require.EqualValues(t, 3, n.Load(), "nothing was sent without its secret")
}

// Without the loopback flag a webhook must be https and must not reach
// loopback; with it, it may not reach the Temporal frontend.
func TestWebhookEgress(t *testing.T) {
	srv, n := signedServer(t, []byte("k"), func([]byte) (int, string) { return http.StatusOK, "" })
	ctx := context.Background()
	var p *PermanentError

	strict := NewWebhooks(sandbox.Egress{}, false)
	strict.Secrets["k"] = []byte("k")
	_, err := strict.Post(ctx, agent.WebhookHook{URL: srv.URL, SecretRef: "k"}, "beforeToolCall", "run/1", nil)
	require.ErrorContains(t, err, "want https")
	require.ErrorAs(t, err, &p)

	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	_, err = strict.Post(ctx, agent.WebhookHook{URL: "https://127.0.0.1:" + port, SecretRef: "k"}, "beforeToolCall", "run/1", nil)
	require.ErrorContains(t, err, "is a loopback address")
	require.ErrorAs(t, err, &p, "a refused address is not worth a retry")

	_, err = strict.Post(ctx, agent.WebhookHook{URL: "https://169.254.169.254/latest/meta-data", SecretRef: "k"}, "beforeToolCall", "run/1", nil)
	require.ErrorContains(t, err, "is a link-local address")

	frontend := NewWebhooks(sandbox.Egress{Frontends: []string{"localhost:" + port}}, true)
	frontend.Secrets["k"] = []byte("k")
	_, err = frontend.Post(ctx, agent.WebhookHook{URL: srv.URL, SecretRef: "k"}, "beforeToolCall", "run/1", nil)
	require.ErrorContains(t, err, "is the Temporal frontend")
	require.Zero(t, n.Load())
}
