package conformance

import (
	"encoding/json"
	"strings"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/internal/jsjson"
)

// The normalization of the reference's normalize.mjs: message_update is
// dropped, an assistant message_start keeps only its role, messages keep
// role, content, stopReason and errorMessage (assistant) or toolCallId,
// toolName, details and isError (tool results), a validation error keeps
// only its first line, and keys are sorted.

const validationPrefix = "Validation failed for tool"

// NormalizeEvent returns the normalized form of an event as a JSON value, or
// nil for events that are not compared.
func NormalizeEvent(e agent.Event) map[string]any {
	args := normArgs(e.Args, e.RawArgs)
	switch e.Type {
	case agent.EventAgentStart, agent.EventTurnStart:
		return map[string]any{"type": string(e.Type)}
	case agent.EventAgentEnd:
		return map[string]any{"type": string(e.Type), "messages": normMessages(e.Messages)}
	case agent.EventTurnEnd:
		return map[string]any{"type": string(e.Type), "message": normMessage(e.Message), "toolResults": normMessages(e.ToolResults)}
	case agent.EventMessageStart:
		if e.Message != nil && e.Message.Role == agent.RoleAssistant {
			return map[string]any{"type": string(e.Type), "message": map[string]any{"role": agent.RoleAssistant}}
		}
		return map[string]any{"type": string(e.Type), "message": normMessage(e.Message)}
	case agent.EventMessageEnd:
		return map[string]any{"type": string(e.Type), "message": normMessage(e.Message)}
	case agent.EventMessageUpdate, agent.EventApprovalRequest, agent.EventApprovalDecision:
		// Streaming granularity is not compared, and approvals are not
		// pi's: neither appears in a conformance trace.
		return nil
	case agent.EventToolExecutionStart:
		return map[string]any{"type": string(e.Type), "toolCallId": e.ToolCallID, "toolName": e.ToolName, "args": args}
	case agent.EventToolExecutionUpdate:
		return map[string]any{"type": string(e.Type), "toolCallId": e.ToolCallID, "toolName": e.ToolName, "partialResult": normResult(e.PartialResult)}
	case agent.EventToolExecutionEnd:
		return map[string]any{"type": string(e.Type), "toolCallId": e.ToolCallID, "toolName": e.ToolName,
			"result": normResult(e.Result), "isError": e.IsError}
	default:
		return map[string]any{"type": string(e.Type)}
	}
}

func normText(s string) string {
	if strings.HasPrefix(s, validationPrefix) {
		first, _, _ := strings.Cut(s, "\n")
		return first
	}
	return s
}

// normArgs is pi's `args ?? {}`: arguments that are not an object are
// kept as they are, except null.
func normArgs(args map[string]any, raw json.RawMessage) any {
	if len(raw) > 0 {
		var v any
		if json.Unmarshal(raw, &v) == nil && v != nil {
			return v
		}
	}
	if args == nil {
		return map[string]any{}
	}
	return args
}

func normContent(content []agent.Content) []any {
	out := make([]any, 0, len(content))
	for _, b := range content {
		switch b.Type {
		case agent.ContentText:
			out = append(out, map[string]any{"type": b.Type, "text": normText(b.Text)})
		case agent.ContentThinking:
			out = append(out, map[string]any{"type": b.Type, "thinking": b.Thinking})
		case agent.ContentToolCall:
			out = append(out, map[string]any{"type": b.Type, "id": b.ID, "name": b.Name, "arguments": normArgs(b.Arguments, b.RawArguments)})
		case agent.ContentImage:
			out = append(out, map[string]any{"type": b.Type, "mimeType": b.MimeType, "data": b.Data})
		default:
			out = append(out, toValue(b))
		}
	}
	return out
}

func normMessage(m *agent.Message) any {
	if m == nil {
		return nil
	}
	out := map[string]any{"role": m.Role, "content": normContent(m.Content)}
	switch m.Role {
	case agent.RoleAssistant:
		out["stopReason"] = string(m.StopReason)
		if m.ErrorMessage != "" {
			out["errorMessage"] = m.ErrorMessage
		}
	case agent.RoleToolResult:
		out["toolCallId"] = m.ToolCallID
		out["toolName"] = m.ToolName
		out["details"] = toValue(agent.DetailsOrEmpty(m.Details))
		out["isError"] = m.IsError
	}
	return out
}

func normMessages(ms []agent.Message) []any {
	out := make([]any, 0, len(ms))
	for i := range ms {
		out = append(out, normMessage(&ms[i]))
	}
	return out
}

func normResult(r *agent.ToolResult) any {
	if r == nil {
		return nil
	}
	out := map[string]any{"content": normContent(r.Content), "details": toValue(agent.DetailsOrEmpty(r.Details))}
	if r.Terminate {
		out["terminate"] = true
	}
	return out
}

// toValue decodes JSON-encodable data into plain maps, slices and numbers.
func toValue(v any) any {
	var b []byte
	switch x := v.(type) {
	case json.RawMessage:
		b = x
	default:
		b, _ = json.Marshal(v)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil
	}
	return out
}

// canonicalJSON encodes v with sorted keys as JSON.stringify of the
// reference's canonical() does.
func canonicalJSON(v any) string {
	return jsjson.Stringify(toValue(v), jsjson.Options{})
}

// TraceLine is one normalized event as a line of the trace.
func TraceLine(e agent.Event) (string, bool) {
	n := NormalizeEvent(e)
	if n == nil {
		return "", false
	}
	return canonicalJSON(n), true
}
