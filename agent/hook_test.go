package agent

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// A list of names reads and writes as it did before remote hooks, and the
// objects round-trip.
func TestHookJSON(t *testing.T) {
	in := `["policy",{"activity":{"taskQueue":"team-hooks","activityType":"checkCall","timeout":"10s"}},` +
		`{"webhook":{"url":"https://hooks.example.com/before","secretRef":"team","timeout":"5s"}}]`
	var hs []Hook
	require.NoError(t, json.Unmarshal([]byte(in), &hs))
	require.Equal(t, []Hook{
		{Name: "policy"},
		{Activity: &ActivityHook{TaskQueue: "team-hooks", ActivityType: "checkCall", Timeout: "10s"}},
		{Webhook: &WebhookHook{URL: "https://hooks.example.com/before", SecretRef: "team", Timeout: "5s"}},
	}, hs)
	out, err := json.Marshal(hs)
	require.NoError(t, err)
	require.JSONEq(t, in, string(out))
	require.Equal(t, []string{"policy"}, GoHookNames(hs))
	require.True(t, HasRemoteHook(hs))
	require.False(t, HasRemoteHook(HookNames("a", "b")))

	out, err = json.Marshal(LoopConfig{BeforeToolCall: HookNames("a", "b")})
	require.NoError(t, err)
	require.Contains(t, string(out), `"beforeToolCall":["a","b"]`)
}

func TestHookJSONRefusesWhatItDoesNotKnow(t *testing.T) {
	for in, want := range map[string]string{
		`{"activity":{"taskQueue":"q","activityType":"a"},"webhook":{"url":"https://x"}}`: `exactly one of "activity" and "webhook"`,
		`{}`: `exactly one of "activity" and "webhook"`,
		`{"activity":{"taskQueue":"q","activityType":"a","queue":"x"}}`: `unknown field "queue"`,
		`{"lambda":{}}`: `unknown field "lambda"`,
		`42`:            `a hook is a Go hook's name (a JSON string), {"activity": {...}} or {"webhook": {...}}, not 42`,
	} {
		var h Hook
		require.ErrorContains(t, json.Unmarshal([]byte(in), &h), want, in)
	}
}

func TestHookCheck(t *testing.T) {
	for _, c := range []struct {
		hook Hook
		want string
	}{
		{Hook{Name: "policy"}, ""},
		{Hook{}, "empty hook name"},
		{Hook{Activity: &ActivityHook{TaskQueue: "q"}}, "want taskQueue and activityType"},
		{Hook{Activity: &ActivityHook{TaskQueue: "q", ActivityType: "a", Timeout: "forever"}}, `timeout "forever"`},
		{Hook{Activity: &ActivityHook{TaskQueue: "q", ActivityType: "a", Timeout: "2h"}}, "up to 1h0m0s"},
		{Hook{Webhook: &WebhookHook{URL: "ftp://x/y", SecretRef: "s"}}, "want https://host/path"},
		{Hook{Webhook: &WebhookHook{URL: "https://user:pw@x/y", SecretRef: "s"}}, "want https://host/path"},
		{Hook{Webhook: &WebhookHook{URL: "https://x/y"}}, "exactly one of secretRef"},
		{Hook{Webhook: &WebhookHook{URL: "https://x/y", SecretRef: "s", SecretEnv: WebhookSecretEnvPrefix + "S"}}, "exactly one of secretRef"},
		{Hook{Webhook: &WebhookHook{URL: "https://x/y", SecretEnv: "ANTHROPIC_API_KEY"}}, "begins with " + WebhookSecretEnvPrefix},
		{Hook{Webhook: &WebhookHook{URL: "https://x/y", SecretEnv: WebhookSecretEnvPrefix + "TEAM"}}, ""},
	} {
		err := c.hook.Check()
		if c.want == "" {
			require.NoError(t, err, c.hook.String())
			continue
		}
		require.ErrorContains(t, err, c.want, c.hook.String())
	}

	cfg := LoopConfig{Model: ModelRef{Provider: "p", ID: "m"}, AfterToolCall: []Hook{{Webhook: &WebhookHook{URL: "https://x"}}}}
	require.ErrorContains(t, cfg.Normalize(), "afterToolCall[0]: webhook https://x: want exactly one of secretRef")
}
