package fleettest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/hooks"
	"github.com/durable-agents/agentloop/internal/harness/fleettest"
)

// The real worker signs webhook hooks with the secrets its flags and
// environment give it, keeps those secrets from the commands it runs, and
// refuses webhook URLs aimed at the Temporal frontend or a private
// network, failing the call closed.
func TestWebhookHooksOnTheRealWorker(t *testing.T) {
	t.Parallel()
	m := newHostModel()
	close(m.gate)
	f := fleettest.Start(t, fleettest.Options{Decide: m.decide})
	const fileSecret, envSecret = "file-secret-3f9a", "env-secret-77c2"
	secretFile := filepath.Join(f.Dir, "team.secret")
	require.NoError(t, os.WriteFile(secretFile, []byte(fileSecret+"\n"), 0o600))

	var mu sync.Mutex
	var saw []string // event: what the hook saw, for each signed request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		event := r.Header.Get(hooks.EventHeader)
		secret := map[string]string{"beforeToolCall": envSecret, "afterToolCall": fileSecret}[event]
		if !hooks.Verify([]byte(secret), body, r.Header.Get(hooks.SignatureHeader)) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var req struct {
			Args   map[string]any   `json:"args"`
			Result agent.ToolResult `json:"result"`
		}
		require.NoError(t, json.Unmarshal(body, &req))
		mu.Lock()
		defer mu.Unlock()
		if event == "beforeToolCall" {
			saw = append(saw, event+": "+req.Args["command"].(string))
			return
		}
		saw = append(saw, event+": "+agent.TextOf(req.Result.Content))
	}))
	t.Cleanup(srv.Close)

	env := append(f.Env(), agent.WebhookSecretEnvPrefix+"TEAM="+envSecret)
	f.AddHost("host-a", env, "-webhook-secret", "team="+secretFile, "-webhook-allow-http-loopback")
	f.WaitCurrent(time.Minute)

	run := func(id string, before, after []agent.Hook) agentapi.AgentLoopResult {
		t.Helper()
		cfg := config(f)
		cfg.BeforeToolCall, cfg.AfterToolCall = before, after
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		r, err := agentclient.Start(ctx, f.Client, id, f.Queue, agentapi.AgentLoopInput{LoopConfig: cfg, Prompt: "Run: env"})
		require.NoError(t, err)
		var res agentapi.AgentLoopResult
		require.NoError(t, r.Get(ctx, &res))
		return res
	}

	res := run("webhook-signed",
		[]agent.Hook{{Webhook: &agent.WebhookHook{URL: srv.URL + "/before", SecretEnv: agent.WebhookSecretEnvPrefix + "TEAM", Timeout: "30s"}}},
		[]agent.Hook{{Webhook: &agent.WebhookHook{URL: srv.URL + "/after", SecretRef: "team", Timeout: "30s"}}})
	out := agent.TextOf(res.Messages[2].Content)
	require.False(t, res.Messages[2].IsError, out)
	require.Contains(t, out, "PATH=", "env ran")
	require.NotContains(t, out, envSecret, "the commands do not inherit the webhook secret variables")
	require.NotContains(t, out, agent.WebhookSecretEnvPrefix)
	mu.Lock()
	require.Equal(t, []string{"beforeToolCall: env", "afterToolCall: " + out}, saw)
	mu.Unlock()

	for _, c := range []struct{ url, want string }{
		{"http://" + f.Server.FrontendHostPort() + "/api", "is the Temporal frontend"},
		{"https://10.1.2.3/hook", "(10.1.2.3) is a private address"},
	} {
		res := run("webhook-refused-"+strings.Split(c.url, "/")[2],
			[]agent.Hook{{Webhook: &agent.WebhookHook{URL: c.url, SecretRef: "team", Timeout: "30s"}}}, nil)
		require.True(t, res.Messages[2].IsError)
		require.Contains(t, agent.TextOf(res.Messages[2].Content), c.want)
	}
}
