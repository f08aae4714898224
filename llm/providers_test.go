package llm

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/durable-agents/agentloop/agent"
)

func TestRegisterFromEnv(t *testing.T) {
	env := map[string]string{
		"ANTHROPIC_API_KEY":          "sk-ant-1",
		"OPENROUTER_API_KEY":         "or-1",
		"OPENAI_COMPATIBLE_BASE_URL": "http://localhost:8000/v1",
		"OPENAI_COMPATIBLE_NAME":     "vllm",
		"OPENAI_COMPATIBLE_API":      "responses",
	}
	reg := NewRegistry()
	names := RegisterFromEnv(reg, func(k string) string { return env[k] })
	want := []string{"anthropic", "ollama", "openrouter", "vllm"}
	if !slices.Equal(names, want) || !slices.Equal(reg.Providers(), want) {
		t.Fatalf("registered %v (registry %v), want %v", names, reg.Providers(), want)
	}
	for _, ref := range []string{"anthropic/claude-sonnet-4-5", "ollama/qwen3:8b", "openrouter/anthropic/claude-sonnet-4.5", "vllm/meta/llama"} {
		r, err := agent.ParseModelRef(ref)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := reg.Model(r); err != nil {
			t.Errorf("%s: %v", ref, err)
		}
	}
	if _, err := reg.Model(agent.ModelRef{Provider: "openai", ID: "gpt-5"}); err == nil {
		t.Error("openai is registered without OPENAI_API_KEY")
	}
	vllm, _ := reg.Model(agent.ModelRef{Provider: "vllm", ID: "m"})
	if m := vllm.(*openAIModel); m.p.cfg.API != APIOpenAIResponses || m.p.cfg.BaseURL != "http://localhost:8000/v1" || m.p.cfg.APIKey != "" {
		t.Errorf("vllm config %+v", m.p.cfg)
	}
	ollama, _ := reg.Model(agent.ModelRef{Provider: "ollama", ID: "m"})
	if m := ollama.(*openAIModel); m.p.cfg.BaseURL != DefaultOllamaBaseURL || m.p.cfg.API != APIOpenAICompletions {
		t.Errorf("ollama config %+v", m.p.cfg)
	}
}

func TestOpenAIFromEnvUsesResponsesByDefault(t *testing.T) {
	reg := NewRegistry()
	RegisterFromEnv(reg, func(k string) string {
		return map[string]string{"OPENAI_API_KEY": "sk-1", "OPENAI_COMPATIBLE_BASE_URL": "http://x/v1", "OPENAI_COMPATIBLE_NAME": "bad/name"}[k]
	})
	if want := []string{"ollama", "openai", "openai-compatible"}; !slices.Equal(reg.Providers(), want) {
		t.Errorf("providers %v, want %v", reg.Providers(), want)
	}
	m, err := reg.Model(agent.ModelRef{Provider: "openai", ID: "gpt-5"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg := m.(*openAIModel).p.cfg; cfg.API != APIOpenAIResponses || cfg.BaseURL != DefaultOpenAIBaseURL || !cfg.Catalog {
		t.Errorf("openai config %+v", cfg)
	}
}

func TestEmptyModelID(t *testing.T) {
	if _, err := NewAnthropicProvider(AnthropicConfig{}).Model(""); err == nil {
		t.Error("anthropic accepted an empty id")
	}
	if _, err := NewOpenAIProvider(OpenAIConfig{}).Model(""); err == nil {
		t.Error("openai accepted an empty id")
	}
}

func TestFillCost(t *testing.T) {
	u := agent.Usage{Input: 1_000_000, Output: 2_000_000, CacheRead: 1_000_000, CacheWrite: 1_000_000}
	FillCost("claude-opus-4-5", &u)
	if c := u.Cost; c.Input != 5 || c.Output != 50 || c.CacheRead != 0.5 || c.CacheWrite != 6.25 || c.Total != 61.75 {
		t.Errorf("claude-opus-4-5 cost %+v", c)
	}
	FillCost("openai/gpt-4o-mini", &u)
	if u.Cost.Input != 0.15 {
		t.Errorf("OpenRouter id: %+v", u.Cost)
	}
	FillCost("llama3", &u)
	if u.Cost != (agent.Cost{}) {
		t.Errorf("unknown model cost %+v, want 0", u.Cost)
	}
	if p, ok := LookupPrice("anthropic/claude-sonnet-4.5"); !ok || p.Input != 3 {
		t.Errorf("dotted OpenRouter id: %+v %v", p, ok)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		header http.Header
		want   time.Duration
	}{
		{http.Header{"Retry-After": {"12"}}, 12 * time.Second},
		{http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {"Wed, 01 Jan 2025 12:00:30 GMT"}}, 30 * time.Second},
		{http.Header{"Retry-After": {"Wed, 01 Jan 2025 11:00:00 GMT"}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{nil, 0},
	}
	for _, tc := range cases {
		if got := retryAfter(tc.header, now); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.header, got, tc.want)
		}
	}
}

func TestContextOverflowPatterns(t *testing.T) {
	overflow := []string{
		"prompt is too long: 213462 tokens > 200000 maximum",
		"Your input exceeds the context window of this model",
		"This endpoint's maximum context length is 128000 tokens. However, you requested about 130000 tokens",
		"the request exceeds the available context size, try increasing it",
		"prompt too long; exceeded max context length by 100 tokens",
	}
	for _, s := range overflow {
		if !isContextOverflow(s) {
			t.Errorf("not recognised as overflow: %q", s)
		}
	}
	for _, s := range []string{"ThrottlingException: Too many tokens, rate limit", "invalid tool schema"} {
		if isContextOverflow(s) {
			t.Errorf("wrongly recognised as overflow: %q", s)
		}
	}
}

func TestShortHashMatchesPi(t *testing.T) {
	// Values from pi-ai 0.73.1's utils/hash.js.
	for in, want := range map[string]string{"fc_9+x": "1snize26chio6", "": "k4n83c7h0j2b", "héllo😀": "1olj6nu1frhbfw"} {
		if got := shortHash(in); got != want {
			t.Errorf("shortHash(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestNetworkErrorIsUnavailable(t *testing.T) {
	// A port nothing listens on: the connection is refused.
	p := NewOpenAIProvider(OpenAIConfig{Name: "local", BaseURL: "http://127.0.0.1:1/v1", APIKey: "sk-secret-value"})
	m, _ := p.Model("m")
	_, err := m.Stream(context.Background(), requestX(), nil)
	e, ok := AsError(err)
	if !ok || e.Kind != ErrUnavailable || !e.Kind.Retryable() {
		t.Fatalf("err %v", err)
	}
	if strings.Contains(e.Message, "sk-secret-value") {
		t.Error("key in the message")
	}
}
