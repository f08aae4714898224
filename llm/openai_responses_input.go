package llm

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/durable-agents/agentloop/agent"
)

// responsesInput maps the transcript onto Responses API input items, as
// pi-ai's convertResponsesMessages does.
func (m *openAIModel) responsesInput(req Request) responses.ResponseInputParam {
	var items responses.ResponseInputParam
	if req.SystemPrompt != "" {
		role := responses.EasyInputMessageRoleSystem
		if m.info.reasoning {
			role = responses.EasyInputMessageRoleDeveloper
		}
		items = append(items, responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
			Role:    role,
			Content: responses.EasyInputMessageContentUnionParam{OfString: param.NewOpt(req.SystemPrompt)},
		}})
	}
	// index numbers the messages sent, for the ids of text without one.
	index := 0
	for _, msg := range transformMessages(req.Messages, m.target(), m.normalizeResponsesID) {
		var add []responses.ResponseInputItemUnionParam
		switch msg.Role {
		case agent.RoleUser:
			if content := responsesContent(msg.Content); len(content) > 0 {
				add = append(add, responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
					Role:    responses.EasyInputMessageRoleUser,
					Content: responses.EasyInputMessageContentUnionParam{OfInputItemContentList: content},
				}})
			}
		case agent.RoleAssistant:
			add = m.responsesAssistant(msg, index)
		case agent.RoleToolResult:
			add = append(add, m.responsesToolResult(msg))
		}
		if len(add) == 0 {
			continue
		}
		items = append(items, add...)
		index++
	}
	return items
}

func responsesContent(content []agent.Content) responses.ResponseInputMessageContentListParam {
	var out responses.ResponseInputMessageContentListParam
	for _, c := range content {
		switch c.Type {
		case agent.ContentText:
			out = append(out, responses.ResponseInputContentUnionParam{OfInputText: &responses.ResponseInputTextParam{Text: c.Text}})
		case agent.ContentImage:
			out = append(out, responses.ResponseInputContentUnionParam{OfInputImage: &responses.ResponseInputImageParam{
				Detail:   responses.ResponseInputImageDetailAuto,
				ImageURL: param.NewOpt(dataURL(c)),
			}})
		}
	}
	return out
}

// responsesAssistant sends a turn back as the items it came from:
// reasoning items verbatim (their encrypted content lets the model go on
// thinking), text as output messages under their item id, tool calls as
// function calls.
func (m *openAIModel) responsesAssistant(msg agent.Message, index int) []responses.ResponseInputItemUnionParam {
	var items []responses.ResponseInputItemUnionParam
	// Another model of the same provider has not seen these fc_ ids paired
	// with its reasoning; leaving them out avoids that check.
	otherModel := msg.Model != m.id && msg.Provider == m.p.cfg.Name && msg.API == APIOpenAIResponses
	for _, c := range msg.Content {
		switch c.Type {
		case agent.ContentThinking:
			if c.ThinkingSignature != "" && json.Valid([]byte(c.ThinkingSignature)) {
				r := param.Override[responses.ResponseReasoningItemParam](json.RawMessage(c.ThinkingSignature))
				items = append(items, responses.ResponseInputItemUnionParam{OfReasoning: &r})
			}
		case agent.ContentText:
			items = append(items, responsesOutputText(c, index))
		case agent.ContentToolCall:
			callID, itemID, _ := strings.Cut(c.ID, "|")
			call := &responses.ResponseFunctionToolCallParam{CallID: callID, Name: c.Name, Arguments: jsonString(c.ArgumentsValue())}
			if itemID != "" && !(otherModel && strings.HasPrefix(itemID, "fc_")) {
				call.ID = param.NewOpt(itemID)
			}
			items = append(items, responses.ResponseInputItemUnionParam{OfFunctionCall: call})
		}
	}
	return items
}

func responsesOutputText(c agent.Content, index int) responses.ResponseInputItemUnionParam {
	id, phase := parseTextSignature(c.TextSignature)
	switch {
	case id == "":
		id = "msg_" + strconv.Itoa(index)
	case len(id) > 64:
		id = "msg_" + shortHash(id)
	}
	return responses.ResponseInputItemUnionParam{OfOutputMessage: &responses.ResponseOutputMessageParam{
		ID:     id,
		Status: responses.ResponseOutputMessageStatusCompleted,
		Phase:  responses.ResponseOutputMessagePhase(phase),
		Content: []responses.ResponseOutputMessageContentUnionParam{{OfOutputText: &responses.ResponseOutputTextParam{
			Text:        c.Text,
			Annotations: []responses.ResponseOutputTextAnnotationUnionParam{},
		}}},
	}}
}

// responsesToolResult sends the result's text, or text and images as input
// content when the model sees images.
func (m *openAIModel) responsesToolResult(msg agent.Message) responses.ResponseInputItemUnionParam {
	callID, _, _ := strings.Cut(msg.ToolCallID, "|")
	var texts []string
	hasImages := false
	for _, c := range msg.Content {
		switch c.Type {
		case agent.ContentText:
			texts = append(texts, c.Text)
		case agent.ContentImage:
			hasImages = true
		}
	}
	text := strings.Join(texts, "\n")
	out := &responses.ResponseInputItemFunctionCallOutputParam{CallID: param.NewOpt(callID)}
	if hasImages && m.info.images {
		var parts responses.ResponseFunctionCallOutputItemListParam
		if text != "" {
			parts = append(parts, responses.ResponseFunctionCallOutputItemUnionParam{OfInputText: &responses.ResponseInputTextContentParam{Text: text}})
		}
		for _, c := range msg.Content {
			if c.Type == agent.ContentImage {
				parts = append(parts, responses.ResponseFunctionCallOutputItemUnionParam{OfInputImage: &responses.ResponseInputImageContentParam{
					Detail:   responses.ResponseInputImageContentDetailAuto,
					ImageURL: param.NewOpt(dataURL(c)),
				}})
			}
		}
		out.Output.OfResponseFunctionCallOutputItemArray = parts
	} else {
		if text == "" {
			text = "(see attached image)"
		}
		out.Output.OfString = param.NewOpt(text)
	}
	return responses.ResponseInputItemUnionParam{OfFunctionCallOutput: out}
}

// textSignature is how a Responses text block remembers its item id and
// phase (pi-ai's v1 format); older signatures are the bare id.
type textSignature struct {
	V     int    `json:"v"`
	ID    string `json:"id"`
	Phase string `json:"phase,omitempty"`
}

func encodeTextSignature(id, phase string) string {
	return jsonString(textSignature{V: 1, ID: id, Phase: phase})
}

func parseTextSignature(sig string) (id, phase string) {
	if sig == "" {
		return "", ""
	}
	if strings.HasPrefix(sig, "{") {
		var s textSignature
		if json.Unmarshal([]byte(sig), &s) == nil && s.V == 1 && s.ID != "" {
			if s.Phase != "commentary" && s.Phase != "final_answer" {
				s.Phase = ""
			}
			return s.ID, s.Phase
		}
	}
	return sig, ""
}
