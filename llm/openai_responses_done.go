package llm

import (
	"github.com/openai/openai-go/v3/responses"

	"github.com/durable-agents/agentloop/agent"
)

// responseDone records a finished response (response.completed or
// response.incomplete): its id, usage and status.
func (s *responsesStream) responseDone(r responses.Response) {
	s.completed = true
	if r.ID != "" {
		s.a.msg.ResponseID = r.ID
	}
	if r.JSON.Usage.Valid() {
		// input_tokens counts cached tokens; pi's input does not.
		cached := r.Usage.InputTokensDetails.CachedTokens
		s.a.setUsage(agent.Usage{
			Input:       r.Usage.InputTokens - cached,
			Output:      r.Usage.OutputTokens,
			CacheRead:   cached,
			TotalTokens: r.Usage.TotalTokens,
		})
		s.applyServiceTier(string(r.ServiceTier))
	}
	switch r.Status {
	case "", "completed", "in_progress", "queued":
		s.a.msg.StopReason = agent.StopReasonStop
	case "incomplete":
		s.a.msg.StopReason = agent.StopReasonLength
	case "failed", "cancelled":
		s.a.msg.StopReason = agent.StopReasonError
	default:
		s.unhandled = string(r.Status)
	}
	if s.a.msg.StopReason == agent.StopReasonStop && len(s.a.msg.ToolCalls()) > 0 {
		s.a.msg.StopReason = agent.StopReasonToolUse
	}
}

// applyServiceTier prices flex and priority processing as pi does.
func (s *responsesStream) applyServiceTier(tier string) {
	factor := 1.0
	switch {
	case tier == "flex":
		factor = 0.5
	case tier == "priority" && s.a.msg.Model == "gpt-5.5":
		factor = 2.5
	case tier == "priority":
		factor = 2
	}
	c := &s.a.usage.Cost
	c.Input *= factor
	c.Output *= factor
	c.CacheRead *= factor
	c.CacheWrite *= factor
	c.Total = c.Input + c.Output + c.CacheRead + c.CacheWrite
}

// failed reads a response.failed event into a classified error, with pi's
// wording.
func (s *responsesStream) failed(r responses.Response) {
	code, message := string(r.Error.Code), r.Error.Message
	var text string
	switch {
	case r.JSON.Error.Valid():
		text = orDefault(code, "unknown") + ": " + orDefault(message, "no message")
	case r.IncompleteDetails.Reason != "":
		text = "incomplete: " + string(r.IncompleteDetails.Reason)
	default:
		text = "Unknown error (no error details in response)"
	}
	s.err = classifyStatus(statusOfCode(code), nil, text, code)
}

// finish ends a stream that reached response.completed.
func (s *responsesStream) finish() agent.Message { return s.a.finish(s.unhandled) }
