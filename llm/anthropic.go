package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/durable-agents/agentloop/agent"
)

// APIAnthropicMessages is the api of messages from the Anthropic provider.
const APIAnthropicMessages = "anthropic-messages"

// AnthropicConfig configures an Anthropic Messages API provider.
type AnthropicConfig struct {
	// Name is the provider name models are registered and stamped with;
	// "anthropic" when empty.
	Name   string
	APIKey string
	// BaseURL overrides https://api.anthropic.com (a proxy or gateway).
	BaseURL string
	// HTTPClient is used for every call; nil means a client without a
	// timeout, since the activity's context bounds each call.
	HTTPClient *http.Client
}

// AnthropicProvider serves Claude models through the Messages API.
type AnthropicProvider struct {
	name   string
	apiKey string
	client anthropic.Client
}

// NewAnthropicProvider returns a provider for cfg. The SDK does not read
// the environment and does not retry: Temporal owns retries.
func NewAnthropicProvider(cfg AnthropicConfig) *AnthropicProvider {
	if cfg.Name == "" {
		cfg.Name = AnthropicProviderName
	}
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithMaxRetries(0),
		option.WithHTTPClient(httpClient),
	}
	if cfg.APIKey != "" {
		// An empty key would still be sent, as an empty bearer token.
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	return &AnthropicProvider{name: cfg.Name, apiKey: cfg.APIKey, client: anthropic.NewClient(opts...)}
}

// Model returns the Claude model id; ids pi-ai does not list are served
// with assumed limits and no price.
func (p *AnthropicProvider) Model(id string) (Model, error) {
	if id == "" {
		return nil, errors.New("anthropic: empty model id")
	}
	info, known := lookupModel(id)
	return &anthropicModel{p: p, id: id, info: info, known: known}, nil
}

type anthropicModel struct {
	p     *AnthropicProvider
	id    string
	info  modelInfo
	known bool
}

func (m *anthropicModel) target() target {
	return target{api: APIAnthropicMessages, provider: m.p.name, model: m.id, images: m.info.images || !m.known}
}

// Stream calls the Messages API with streaming on and turns its events into
// pi-ai's.
func (m *anthropicModel) Stream(ctx context.Context, req Request, emit func(agent.StreamEvent)) (agent.Message, error) {
	a := newAssembler(APIAnthropicMessages, m.p.name, m.id, m.info.price, emit)
	params, beta := m.request(req)
	var opts []option.RequestOption
	if beta != "" {
		opts = append(opts, option.WithHeader("anthropic-beta", beta))
	}
	stream := m.p.client.Messages.NewStreaming(ctx, params, opts...)
	defer stream.Close()
	if err := stream.Err(); err != nil {
		return m.failed(ctx, a, err)
	}
	a.start()
	s := newAnthropicStream(a)
	for stream.Next() {
		s.handle(stream.Current())
	}
	if err := stream.Err(); err != nil {
		return m.failed(ctx, a, err)
	}
	if aborted(ctx) {
		return a.aborted(), nil
	}
	if !s.stopped {
		// pi checks this only after a message_start; an empty 200 body is
		// just as incomplete.
		return m.failed(ctx, a, errStreamCut)
	}
	return s.finish(), nil
}

// failed ends a call that did not complete. A cancelled context is an
// abort, which pi reports as data; anything else, a deadline included, is a
// classified *Error.
func (m *anthropicModel) failed(ctx context.Context, a *assembler, err error) (agent.Message, error) {
	if aborted(ctx) {
		return a.aborted(), nil
	}
	e := ctxFailure(ctx)
	if e == nil {
		e = classifyAnthropic(err)
	}
	e = scrubbed(e, m.p.apiKey)
	msg := a.final()
	msg.StopReason = agent.StopReasonError
	msg.ErrorMessage = e.Message
	return msg, e
}

// classifyAnthropic reads an SDK error: an HTTP status, or for an error
// event inside a stream (status 200) the error type.
func classifyAnthropic(err error) *Error {
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) {
		return networkError(err)
	}
	errType := string(apiErr.Type())
	status := apiErr.StatusCode
	if status < 400 {
		status = anthropicErrorStatus[errType]
	}
	if status == 0 {
		// An error event of a type this code does not know: the server's.
		status = http.StatusInternalServerError
	}
	var header http.Header
	if apiErr.Response != nil {
		header = apiErr.Response.Header
	}
	message := apiErr.Message
	if message == "" {
		// Not Anthropic's error JSON: a proxy's page, say.
		message = truncate(strings.TrimSpace(apiErr.RawJSON()), 2000)
	}
	return classifyStatus(status, header, message, errType)
}

// anthropicErrorStatus is the HTTP status each error type stands for, for
// errors that arrive as events in a stream that began with 200.
var anthropicErrorStatus = map[string]int{
	"invalid_request_error": 400,
	"authentication_error":  401,
	"billing_error":         402,
	"permission_error":      403,
	"not_found_error":       404,
	"request_too_large":     413,
	"rate_limit_error":      429,
	"api_error":             500,
	"timeout_error":         504,
	"overloaded_error":      529,
}
