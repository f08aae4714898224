package llm

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/durable-agents/agentloop/agent"
)

// The smoke tests call the real APIs, one tool-using turn each, when a key
// is set; they are skipped otherwise. Models can be chosen with
// ANTHROPIC_SMOKE_MODEL and OPENAI_SMOKE_MODEL.

func TestAnthropicSmoke(t *testing.T) {
	key := os.Getenv("ANTHROPIC_API_KEY")
	if key == "" {
		t.Skip("ANTHROPIC_API_KEY is not set")
	}
	p := NewAnthropicProvider(AnthropicConfig{APIKey: key, BaseURL: os.Getenv("ANTHROPIC_BASE_URL")})
	smokeToolTurn(t, p, orDefault(os.Getenv("ANTHROPIC_SMOKE_MODEL"), "claude-haiku-4-5"), key)
}

func TestOpenAISmoke(t *testing.T) {
	key := os.Getenv("OPENAI_API_KEY")
	if key == "" {
		t.Skip("OPENAI_API_KEY is not set")
	}
	for _, api := range []string{APIOpenAIResponses, APIOpenAICompletions} {
		t.Run(api, func(t *testing.T) {
			p := NewOpenAIProvider(OpenAIConfig{
				Name:    OpenAIProviderName,
				APIKey:  key,
				BaseURL: orDefault(os.Getenv("OPENAI_BASE_URL"), DefaultOpenAIBaseURL),
				API:     api,
				Catalog: true,
			})
			smokeToolTurn(t, p, orDefault(os.Getenv("OPENAI_SMOKE_MODEL"), "gpt-4.1-mini"), key)
		})
	}
}

// smokeToolTurn asks for the weather, expects a get_weather call, answers
// it and expects a final text that uses the answer.
func smokeToolTurn(t *testing.T, p Provider, id, key string) {
	m, err := p.Model(id)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req := Request{
		SystemPrompt: "You answer weather questions with the get_weather tool.",
		Messages:     []agent.Message{agent.UserText("What is the weather in Paris right now? Use the get_weather tool.", 0)},
		Tools:        testTools[:1],
	}
	rec := &recorder{}
	first, err := m.Stream(ctx, req, rec.emit)
	if err != nil {
		t.Fatalf("first call: %v", err)
	}
	t.Logf("first: %s; usage %+v", rec.types(), *first.Usage)
	calls := first.ToolCalls()
	if first.StopReason != agent.StopReasonToolUse || len(calls) == 0 || calls[0].Name != "get_weather" {
		t.Fatalf("want a get_weather call, got %+v", first)
	}
	if city, _ := calls[0].Arguments["city"].(string); !strings.Contains(city, "Paris") {
		t.Errorf("city %q", city)
	}
	req.Messages = append(req.Messages, first)
	for _, c := range calls {
		req.Messages = append(req.Messages, agent.ToolResultMessage(c, agent.TextResult("18°C and sunny"), false, 0))
	}
	second, err := m.Stream(ctx, req, nil)
	if err != nil {
		t.Fatalf("second call: %v", err)
	}
	text := agent.TextOf(second.Content)
	t.Logf("second: %q; usage %+v", text, *second.Usage)
	if second.StopReason != agent.StopReasonStop || !strings.Contains(text, "18") {
		t.Errorf("want a final answer with the temperature, got %+v", second)
	}
	if strings.Contains(second.ErrorMessage+first.ErrorMessage, key) {
		t.Error("key in an error message")
	}
}
