package hooks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/internal/sandbox"
)

// The headers of a webhook request. SignatureHeader is
// "sha256=" + hex(HMAC-SHA256(secret, body)); DeliveryHeader names the
// hook call, the same in each of its retries; EventHeader is
// "beforeToolCall" or "afterToolCall".
const (
	SignatureHeader = "X-Agentloop-Signature-256"
	DeliveryHeader  = "X-Agentloop-Delivery"
	EventHeader     = "X-Agentloop-Hook"
)

// maxAnswer bounds what a webhook's answer may be.
const maxAnswer = 1 << 20

// Sign returns the signature header's value for body under secret.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether sig is body's signature under secret, in constant
// time: what a webhook's server checks.
func Verify(secret, body []byte, sig string) bool {
	return hmac.Equal([]byte(Sign(secret, body)), []byte(sig))
}

// Webhooks calls webhook hooks for a worker: it holds their secrets and
// the egress policy that keeps a run's URL from reaching inside.
type Webhooks struct {
	// Secrets are the secrets a webhook's secretRef names (-webhook-secret).
	Secrets map[string][]byte
	// Env are the AGENTLOOP_WEBHOOK_SECRET_* variables the worker started
	// with, read before it removed them from its environment.
	Env map[string][]byte
	// Egress decides which addresses a webhook may reach.
	Egress sandbox.Egress
	// AllowHTTPLoopback lets a webhook on a loopback address use http://
	// and reach loopback (tests); https is required otherwise.
	AllowHTTPLoopback bool

	client *http.Client
}

// NewWebhooks returns Webhooks with the given egress policy and no secrets.
func NewWebhooks(egress sandbox.Egress, allowHTTPLoopback bool) *Webhooks {
	egress.AllowLoopback = egress.AllowLoopback || allowHTTPLoopback
	w := &Webhooks{Secrets: map[string][]byte{}, Env: map[string][]byte{}, Egress: egress, AllowHTTPLoopback: allowHTTPLoopback}
	w.client = &http.Client{
		Transport: &http.Transport{
			DialContext:         egress.DialContext,
			TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     90 * time.Second,
		},
		// A redirect would reach an address the policy never saw in the
		// URL the run named: refused, as an answer that is not 2xx.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return w
}

// TakeEnvSecrets moves every AGENTLOOP_WEBHOOK_SECRET_* variable of the
// process environment into Env and unsets it, so that no command the
// worker starts inherits it.
func (w *Webhooks) TakeEnvSecrets() {
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, agent.WebhookSecretEnvPrefix) {
			w.Env[name] = []byte(value)
			_ = os.Unsetenv(name)
		}
	}
}

// secret returns the secret a webhook names.
func (w *Webhooks) secret(h agent.WebhookHook) ([]byte, error) {
	if h.SecretRef != "" {
		if s, ok := w.Secrets[h.SecretRef]; ok && len(s) > 0 {
			return s, nil
		}
		return nil, fmt.Errorf("this worker has no webhook secret %q (worker flag -webhook-secret %s=FILE)", h.SecretRef, h.SecretRef)
	}
	if s, ok := w.Env[h.SecretEnv]; ok && len(s) > 0 {
		return s, nil
	}
	return nil, fmt.Errorf("this worker was started without the webhook secret variable %s", h.SecretEnv)
}

// PermanentError is a webhook failure a retry cannot mend: a refused or
// malformed URL, a 4xx answer, an oversized answer. A missing secret is not
// one: another worker may hold it.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

func permanent(format string, args ...any) error {
	return &PermanentError{Err: fmt.Errorf(format, args...)}
}

// Post sends body, signed, to the webhook and returns its answer's body.
// event is "beforeToolCall" or "afterToolCall"; delivery names the call
// across retries.
func (w *Webhooks) Post(ctx context.Context, h agent.WebhookHook, event, delivery string, body []byte) ([]byte, error) {
	if w.client == nil {
		return nil, permanent("hooks.Webhooks was not made by NewWebhooks")
	}
	secret, err := w.secret(h)
	if err != nil {
		// Not permanent: in a fleet, another worker may hold the secret
		// (a rollout in progress); a retry may run there.
		return nil, err
	}
	u, err := url.Parse(h.URL)
	if err != nil || u.Host == "" {
		return nil, permanent("webhook url %q: want https://host/path", h.URL)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && w.AllowHTTPLoopback && sandbox.IsLoopback(ctx, u.Hostname()):
	default:
		return nil, permanent("webhook url %q: want https (http only to loopback with the worker flag -webhook-allow-http-loopback)", h.URL)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, permanent("webhook %s: %v", h.URL, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "agentloop-webhook")
	req.Header.Set(SignatureHeader, Sign(secret, body))
	req.Header.Set(DeliveryHeader, delivery)
	req.Header.Set(EventHeader, event)
	resp, err := w.client.Do(req)
	if err != nil {
		if refused(err) {
			return nil, permanent("webhook %s: %v", h.URL, err)
		}
		return nil, fmt.Errorf("webhook %s: %w", h.URL, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("webhook %s: reading the answer: %w", h.URL, err)
	}
	if len(answer) > maxAnswer {
		return nil, permanent("webhook %s: the answer is over %d bytes", h.URL, maxAnswer)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		err := fmt.Errorf("webhook %s answered %s: %s", h.URL, resp.Status, firstLine(answer))
		if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout {
			return nil, err
		}
		return nil, &PermanentError{Err: err}
	}
	return answer, nil
}

// refused reports whether the egress policy refused the connection: no
// retry will change that.
func refused(err error) bool { return sandbox.IsRefused(err) }

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
