package llm

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/durable-agents/agentloop/agent"
)

// streamResponses calls the Responses API with streaming on.
func (m *openAIModel) streamResponses(ctx context.Context, req Request, emit func(agent.StreamEvent)) (agent.Message, error) {
	a := newAssembler(APIOpenAIResponses, m.p.cfg.Name, m.id, m.info.price, emit)
	var failure failedResponse
	stream := m.p.responses.NewStreaming(ctx, m.responsesRequest(req), option.WithMiddleware(captureFailure(&failure)))
	defer stream.Close()
	if err := stream.Err(); err != nil {
		return m.failed(ctx, a, err, &failure)
	}
	a.start()
	s := newResponsesStream(a)
	for stream.Next() {
		if s.handle(stream.Current()); s.err != nil {
			break
		}
	}
	if aborted(ctx) {
		return a.aborted(), nil
	}
	if s.err != nil {
		return m.failed(ctx, a, s.err, nil)
	}
	if err := stream.Err(); err != nil {
		return m.failed(ctx, a, err, &failure)
	}
	if !s.completed {
		return m.failed(ctx, a, errStreamCut, nil)
	}
	return s.finish(), nil
}

// responsesRequest is pi-ai's buildParams for the Responses API. Nothing is
// stored on OpenAI's side (store: false): the transcript is resent each
// turn, with encrypted reasoning included so it can be sent back.
func (m *openAIModel) responsesRequest(req Request) responses.ResponseNewParams {
	p := responses.ResponseNewParams{
		Model: m.id,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: m.responsesInput(req)},
		Store: param.NewOpt(false),
	}
	if req.Options.SessionID != "" {
		p.PromptCacheKey = param.NewOpt(req.Options.SessionID)
	}
	if n := m.maxTokens(req.Options); n > 0 {
		p.MaxOutputTokens = param.NewOpt(n)
	}
	if t := req.Options.Temperature; t != nil {
		p.Temperature = param.NewOpt(*t)
	}
	for _, t := range req.Tools {
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
			Name:        t.Name,
			Description: param.NewOpt(t.Description),
			Parameters:  schemaMap(t.Parameters),
			Strict:      param.NewOpt(false),
		}})
	}
	level := req.Options.Reasoning
	switch {
	case !m.reasons(level):
	case level != "":
		p.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffort(m.reasoningEffort(level)), Summary: shared.ReasoningSummaryAuto}
		p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
	case m.known && !m.info.noOff:
		p.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffortNone}
	}
	return p
}

// responsesToolIDProviders keep Responses API "call|item" ids whole; for
// them foreign item ids are rewritten to OpenAI's fc_ form.
var responsesToolIDProviders = map[string]bool{"openai": true, "openai-codex": true, "opencode": true}

// normalizeResponsesID makes a foreign tool call id acceptable to the
// Responses API, as pi-ai does.
func (m *openAIModel) normalizeResponsesID(id string, source agent.Message) string {
	callID, itemID, pair := strings.Cut(id, "|")
	if !responsesToolIDProviders[m.p.cfg.Name] || !pair {
		return idPart(id)
	}
	if source.Provider != m.p.cfg.Name || source.API != APIOpenAIResponses {
		itemID = "fc_" + shortHash(itemID)
		itemID = itemID[:min(len(itemID), 64)]
	} else {
		itemID = idPart(itemID)
	}
	if !strings.HasPrefix(itemID, "fc_") {
		itemID = idPart("fc_" + itemID)
	}
	return idPart(callID) + "|" + itemID
}

var idPartInvalid = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

func idPart(s string) string {
	s = idPartInvalid.ReplaceAllString(s, "_")
	s = s[:min(len(s), 64)]
	return strings.TrimRight(s, "_")
}

// shortHash is pi-ai's 53-bit string hash (utils/hash.js) in base 36, so
// ids shortened here match the ones pi would send.
func shortHash(s string) string {
	h1, h2 := uint32(0xdeadbeef), uint32(0x41c6ce57)
	for _, ch := range utf16.Encode([]rune(s)) {
		h1 = (h1 ^ uint32(ch)) * 2654435761
		h2 = (h2 ^ uint32(ch)) * 1597334677
	}
	h1 = (h1^(h1>>16))*2246822507 ^ (h2^(h2>>13))*3266489909
	h2 = (h2^(h2>>16))*2246822507 ^ (h1^(h1>>13))*3266489909
	return strconv.FormatUint(uint64(h2), 36) + strconv.FormatUint(uint64(h1), 36)
}
