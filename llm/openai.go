package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/durable-agents/agentloop/agent"
)

// The two OpenAI wire APIs, named as pi-ai names them in a message's api.
const (
	APIOpenAICompletions = "openai-completions"
	APIOpenAIResponses   = "openai-responses"
)

// OpenAIConfig configures a provider that speaks the OpenAI API: OpenAI
// itself or any compatible server (Ollama, vLLM, llama.cpp, LM Studio,
// OpenRouter).
type OpenAIConfig struct {
	// Name is the provider name models are registered and stamped with.
	Name string
	// APIKey may be empty: local servers need none, and then no
	// Authorization header is sent.
	APIKey  string
	BaseURL string
	// API is APIOpenAICompletions (Chat Completions, the default) or
	// APIOpenAIResponses.
	API string
	// Catalog looks model ids up in the built-in table of Anthropic and
	// OpenAI models for prices, output limits, reasoning and vision. Leave
	// it off for local servers, whose model names mean something else.
	Catalog bool
	// HTTPClient is used for every call; nil means a client without a
	// timeout, since the activity's context bounds each call.
	HTTPClient *http.Client
}

// OpenAIProvider serves models through the OpenAI API.
type OpenAIProvider struct {
	cfg       OpenAIConfig
	chat      openai.ChatCompletionService
	responses responses.ResponseService
}

// NewOpenAIProvider returns a provider for cfg. The SDK services are built
// directly, not through openai.NewClient, so nothing is read from the
// environment (an OPENAI_API_KEY must never be sent to another server), and
// the SDK does not retry: Temporal owns retries.
func NewOpenAIProvider(cfg OpenAIConfig) *OpenAIProvider {
	if cfg.Name == "" {
		cfg.Name = OpenAIProviderName
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultOpenAIBaseURL
	}
	if cfg.API != APIOpenAIResponses {
		cfg.API = APIOpenAICompletions
	}
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(0),
		option.WithHTTPClient(httpClient),
	}
	return &OpenAIProvider{
		cfg:       cfg,
		chat:      openai.NewChatCompletionService(opts...),
		responses: responses.NewResponseService(opts...),
	}
}

// Model returns a model by the server's id; any id is accepted, since the
// server knows its models and says so with a 404.
func (p *OpenAIProvider) Model(id string) (Model, error) {
	if id == "" {
		return nil, errors.New(p.cfg.Name + ": empty model id")
	}
	m := &openAIModel{p: p, id: id, info: modelInfo{images: true}}
	if p.cfg.Catalog {
		if info, ok := lookupModel(id); ok {
			m.info, m.known = info, true
		}
	}
	return m, nil
}

type openAIModel struct {
	p     *OpenAIProvider
	id    string
	info  modelInfo
	known bool
}

func (m *openAIModel) target() target {
	return target{api: m.p.cfg.API, provider: m.p.cfg.Name, model: m.id, images: m.info.images}
}

// Stream calls the configured API with streaming on.
func (m *openAIModel) Stream(ctx context.Context, req Request, emit func(agent.StreamEvent)) (agent.Message, error) {
	if m.p.cfg.API == APIOpenAIResponses {
		return m.streamResponses(ctx, req, emit)
	}
	return m.streamChat(ctx, req, emit)
}

// isOpenRouter reports whether reasoning goes in OpenRouter's own shape.
func (m *openAIModel) isOpenRouter() bool {
	return m.p.cfg.Name == OpenRouterProviderName || strings.Contains(m.p.cfg.BaseURL, "openrouter.ai")
}

// reasoningEffort is pi-ai's clampThinkingLevel for OpenAI models: xhigh
// only where the model has it, else high. Empty means off.
func (m *openAIModel) reasoningEffort(level string) string {
	switch {
	case level != "xhigh":
		return level
	case m.info.xhigh != "":
		return m.info.xhigh
	case m.known:
		return "high"
	}
	return level
}

// reasons reports whether to send reasoning settings at all: to a model
// the table marks as reasoning, or to one it does not know when the caller
// asked for reasoning.
func (m *openAIModel) reasons(level string) bool {
	return m.info.reasoning || !m.known && level != ""
}

// failed ends a call that did not complete, as anthropicModel.failed does.
func (m *openAIModel) failed(ctx context.Context, a *assembler, err error, resp *failedResponse) (agent.Message, error) {
	if aborted(ctx) {
		return a.aborted(), nil
	}
	e := ctxFailure(ctx)
	if e == nil {
		e = classifyOpenAI(err, resp)
	}
	e = scrubbed(e, m.p.cfg.APIKey)
	msg := a.final()
	msg.StopReason = agent.StopReasonError
	msg.ErrorMessage = e.Message
	return msg, e
}
