package compaction

import (
	"errors"
	"math"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/llm"
)

// Kinds of summarization call.
const (
	// KindHistory summarizes the messages before the cut (pi's generateSummary).
	KindHistory = "history"
	// KindTurnPrefix summarizes the start of a split turn (pi's
	// generateTurnPrefixSummary).
	KindTurnPrefix = "turnPrefix"
)

// RequestOptions are what the summarization requests depend on besides the
// preparation.
type RequestOptions struct {
	// CustomInstructions, when set, are appended to the history prompt as
	// "Additional focus: ..." (a manual compaction's instructions).
	CustomInstructions string `json:"customInstructions,omitempty"`
	// ThinkingLevel is the session's thinking level; it is sent as the
	// request's reasoning when ModelReasons and it is not "off".
	ThinkingLevel string `json:"thinkingLevel,omitempty"`
	// ModelReasons says the summarizing model is a reasoning model (pi's
	// model.reasoning, from the catalog).
	ModelReasons bool `json:"modelReasons,omitempty"`
	// Timestamp stamps the request's user message (pi: Date.now()).
	Timestamp int64 `json:"timestamp"`
}

// SummaryRequest is one summarization call: the model request pi's
// completeSimple is given, to be sent to the session's own model.
type SummaryRequest struct {
	Kind    string      `json:"kind"`
	Request llm.Request `json:"request"`
}

// Requests are the calls a compaction makes, in pi's compact(): the history
// summary, and for a split turn the turn-prefix summary too, which pi makes
// in parallel. History is nil when a split turn has nothing before it (pi
// then uses "No prior history." without asking).
type Requests struct {
	History    *SummaryRequest `json:"history,omitempty"`
	TurnPrefix *SummaryRequest `json:"turnPrefix,omitempty"`
}

// BuildRequests returns the summarization requests for p (the model calls
// of pi's compact(), made through generateSummary and
// generateTurnPrefixSummary).
func BuildRequests(p Preparation, o RequestOptions) Requests {
	if p.IsSplitTurn && len(p.TurnPrefixMessages) > 0 {
		r := Requests{TurnPrefix: turnPrefixRequest(p, o)}
		if len(p.MessagesToSummarize) > 0 {
			r.History = historyRequest(p, o)
		}
		return r
	}
	return Requests{History: historyRequest(p, o)}
}

// historyRequest is generateSummary's request: the conversation in
// <conversation> tags, the previous summary in <previous-summary> tags, then
// the initial or update prompt and the custom instructions; maxTokens is 80%
// of the reserve.
func historyRequest(p Preparation, o RequestOptions) *SummaryRequest {
	prompt := SummarizationPrompt
	if p.PreviousSummary != "" {
		prompt = UpdateSummarizationPrompt
	}
	if o.CustomInstructions != "" {
		prompt += "\n\nAdditional focus: " + o.CustomInstructions
	}
	text := "<conversation>\n" + SerializeConversation(p.MessagesToSummarize) + "\n</conversation>\n\n"
	if p.PreviousSummary != "" {
		text += "<previous-summary>\n" + p.PreviousSummary + "\n</previous-summary>\n\n"
	}
	return request(KindHistory, text+prompt, int(math.Floor(0.8*float64(p.Settings.ReserveTokens))), o)
}

// turnPrefixRequest is generateTurnPrefixSummary's request: no previous
// summary and no custom instructions; maxTokens is half the reserve.
func turnPrefixRequest(p Preparation, o RequestOptions) *SummaryRequest {
	text := "<conversation>\n" + SerializeConversation(p.TurnPrefixMessages) + "\n</conversation>\n\n" +
		TurnPrefixSummarizationPrompt
	return request(KindTurnPrefix, text, int(math.Floor(0.5*float64(p.Settings.ReserveTokens))), o)
}

func request(kind, text string, maxTokens int, o RequestOptions) *SummaryRequest {
	opts := agent.ModelOptions{MaxTokens: maxTokens}
	if o.ModelReasons && o.ThinkingLevel != "" && o.ThinkingLevel != "off" {
		opts.Reasoning = o.ThinkingLevel
	}
	return &SummaryRequest{Kind: kind, Request: llm.Request{
		SystemPrompt: SummarizationSystemPrompt,
		Messages:     []agent.Message{agent.UserText(text, o.Timestamp)},
		Options:      opts,
	}}
}

// SummaryText reads the summary from the summarizer's answer to a request
// of kind: its text blocks joined with newlines. An answer that ended in an
// error fails with pi's message ("Summarization failed: ..." or "Turn
// prefix summarization failed: ...").
func SummaryText(kind string, answer agent.Message) (string, error) {
	if answer.StopReason == agent.StopReasonError {
		reason := answer.ErrorMessage
		if reason == "" {
			reason = "Unknown error"
		}
		if kind == KindTurnPrefix {
			return "", errors.New("Turn prefix summarization failed: " + reason)
		}
		return "", errors.New("Summarization failed: " + reason)
	}
	text, first := "", true
	for _, c := range answer.Content {
		if c.Type != agent.ContentText {
			continue
		}
		if !first {
			text += "\n"
		}
		text, first = text+c.Text, false
	}
	return text, nil
}
