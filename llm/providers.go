package llm

import (
	"strings"
)

// Provider names RegisterFromEnv registers; a model is named
// "provider/model-id", e.g. "anthropic/claude-sonnet-4-5",
// "ollama/qwen3:8b", "openrouter/anthropic/claude-sonnet-4.5".
const (
	AnthropicProviderName        = "anthropic"
	OpenAIProviderName           = "openai"
	OllamaProviderName           = "ollama"
	OpenRouterProviderName       = "openrouter"
	OpenAICompatibleProviderName = "openai-compatible"
)

// KnownProvider reports whether name is a provider this build can serve
// when the worker is configured for it: one RegisterFromEnv registers, or
// the scripted model. A worker that lacks such a provider lacks its key or
// base URL (config drift), while a name no build knows is a typo. A name
// given with OPENAI_COMPATIBLE_NAME is known only to the workers it is
// set on.
func KnownProvider(name string) bool {
	switch name {
	case AnthropicProviderName, OpenAIProviderName, OllamaProviderName, OpenRouterProviderName,
		OpenAICompatibleProviderName, ScriptedProviderName:
		return true
	}
	return false
}

// Default endpoints.
const (
	DefaultOpenAIBaseURL     = "https://api.openai.com/v1"
	DefaultOllamaBaseURL     = "http://localhost:11434/v1"
	DefaultOpenRouterBaseURL = "https://openrouter.ai/api/v1"
)

// RegisterFromEnv registers the real providers that env (os.Getenv in the
// worker) configures, and returns their names. Keys are read here, in the
// worker, and never leave it.
//
//	anthropic          ANTHROPIC_API_KEY (required), ANTHROPIC_BASE_URL
//	openai             OPENAI_API_KEY (required), OPENAI_BASE_URL,
//	                   OPENAI_API (responses, the default, or completions)
//	ollama             OLLAMA_BASE_URL (default http://localhost:11434/v1); always registered, no key
//	openrouter         OPENROUTER_API_KEY (required), OPENROUTER_BASE_URL
//	openai-compatible  OPENAI_COMPATIBLE_BASE_URL (required), OPENAI_COMPATIBLE_API_KEY,
//	                   OPENAI_COMPATIBLE_API (completions, the default, or responses),
//	                   OPENAI_COMPATIBLE_NAME (the provider name; default openai-compatible)
//
// The generic entry serves vLLM, llama.cpp, LM Studio or any other server
// that speaks the OpenAI API.
func RegisterFromEnv(reg *Registry, env func(string) string) []string {
	var names []string
	add := func(name string, p Provider) {
		reg.Register(name, p)
		names = append(names, name)
	}
	if key := env("ANTHROPIC_API_KEY"); key != "" {
		add(AnthropicProviderName, NewAnthropicProvider(AnthropicConfig{APIKey: key, BaseURL: env("ANTHROPIC_BASE_URL")}))
	}
	if key := env("OPENAI_API_KEY"); key != "" {
		add(OpenAIProviderName, NewOpenAIProvider(OpenAIConfig{
			Name:    OpenAIProviderName,
			APIKey:  key,
			BaseURL: orDefault(env("OPENAI_BASE_URL"), DefaultOpenAIBaseURL),
			API:     parseOpenAIAPI(env("OPENAI_API"), APIOpenAIResponses),
			Catalog: true,
		}))
	}
	add(OllamaProviderName, NewOpenAIProvider(OpenAIConfig{
		Name:    OllamaProviderName,
		BaseURL: orDefault(env("OLLAMA_BASE_URL"), DefaultOllamaBaseURL),
		API:     APIOpenAICompletions,
	}))
	if key := env("OPENROUTER_API_KEY"); key != "" {
		add(OpenRouterProviderName, NewOpenAIProvider(OpenAIConfig{
			Name:    OpenRouterProviderName,
			APIKey:  key,
			BaseURL: orDefault(env("OPENROUTER_BASE_URL"), DefaultOpenRouterBaseURL),
			API:     APIOpenAICompletions,
			Catalog: true,
		}))
	}
	if base := env("OPENAI_COMPATIBLE_BASE_URL"); base != "" {
		name := orDefault(env("OPENAI_COMPATIBLE_NAME"), OpenAICompatibleProviderName)
		if strings.Contains(name, "/") {
			// The name is the first segment of "provider/model-id".
			name = OpenAICompatibleProviderName
		}
		add(name, NewOpenAIProvider(OpenAIConfig{
			Name:    name,
			APIKey:  env("OPENAI_COMPATIBLE_API_KEY"),
			BaseURL: base,
			API:     parseOpenAIAPI(env("OPENAI_COMPATIBLE_API"), APIOpenAICompletions),
		}))
	}
	return names
}

// parseOpenAIAPI accepts pi's api names and their short forms.
func parseOpenAIAPI(s, fallback string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "responses", APIOpenAIResponses:
		return APIOpenAIResponses
	case "completions", "chat", APIOpenAICompletions:
		return APIOpenAICompletions
	}
	return fallback
}

func orDefault(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
