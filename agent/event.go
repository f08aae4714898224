package agent

import (
	"encoding/json"
	"fmt"
)

// EventType names an agent event, as pi-agent-core names it.
type EventType string

// pi's events. MessageUpdate is live-only: it never enters the durable log.
const (
	EventAgentStart          EventType = "agent_start"
	EventAgentEnd            EventType = "agent_end"
	EventTurnStart           EventType = "turn_start"
	EventTurnEnd             EventType = "turn_end"
	EventMessageStart        EventType = "message_start"
	EventMessageUpdate       EventType = "message_update"
	EventMessageEnd          EventType = "message_end"
	EventToolExecutionStart  EventType = "tool_execution_start"
	EventToolExecutionUpdate EventType = "tool_execution_update"
	EventToolExecutionEnd    EventType = "tool_execution_end"
)

// Event is one agent event. Seq numbers the durable log from 1; it is not a
// pi field and normalizers drop it. Which other fields are set depends on
// Type; MarshalJSON writes the fields pi writes for that type.
type Event struct {
	Seq  int64     `json:"seq,omitempty"`
	Type EventType `json:"type"`

	Message  *Message  `json:"message,omitempty"`
	Messages []Message `json:"messages,omitempty"`
	// EarlierMessages, on an agent_end, names the run's messages before
	// Messages that the workflow no longer holds (those of an earlier
	// workflow run of a chain that continued as new, and those a
	// compaction summarized), in order; clients read them from the content
	// store (not a pi field).
	EarlierMessages []MessageRange `json:"earlierMessages,omitempty"`
	ToolResults     []Message      `json:"toolResults,omitempty"`

	ToolCallID string         `json:"toolCallId,omitempty"`
	ToolName   string         `json:"toolName,omitempty"`
	Args       map[string]any `json:"args,omitempty"`
	// RawArgs is a call's Content.RawArguments: arguments that are valid
	// JSON but not an object, written as "args" in their place.
	RawArgs       json.RawMessage `json:"-"`
	PartialResult *ToolResult     `json:"partialResult,omitempty"`
	Result        *ToolResult     `json:"result,omitempty"`
	IsError       bool            `json:"isError,omitempty"`

	// AssistantMessageEvent is the provider's stream event of a message_update.
	AssistantMessageEvent *StreamEvent `json:"assistantMessageEvent,omitempty"`
	// Attempt numbers the activity attempt a live message_update or
	// tool_execution_update comes from (not a pi field). When it grows, the
	// call was retried and a client drops the partial it has shown.
	Attempt int32 `json:"attempt,omitempty"`
	// Time is when the worker saw a live update, in Unix milliseconds
	// (not a pi field).
	Time int64 `json:"time,omitempty"`
	// Approval is the payload of approval events.
	Approval *ApprovalInfo `json:"approval,omitempty"`
	// Compaction is the payload of compaction events.
	Compaction *CompactionInfo `json:"compaction,omitempty"`
}

// UnmarshalJSON reads "args" that are not an object into RawArgs.
func (e *Event) UnmarshalJSON(b []byte) error {
	type plain Event
	var raw struct {
		*plain
		Args json.RawMessage `json:"args"`
	}
	raw.plain = (*plain)(e)
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	args, rawArgs, err := SplitArguments(raw.Args)
	if err != nil {
		return fmt.Errorf("args: %w", err)
	}
	e.Args, e.RawArgs = args, rawArgs
	return nil
}

// MarshalJSON writes the event in pi's shape for its type, plus seq.
func (e Event) MarshalJSON() ([]byte, error) {
	out := map[string]any{"type": e.Type}
	if e.Seq != 0 {
		out["seq"] = e.Seq
	}
	var args any = e.Args
	if len(e.RawArgs) > 0 {
		args = e.RawArgs
	} else if e.Args == nil {
		args = map[string]any{}
	}
	switch e.Type {
	case EventAgentEnd:
		out["messages"] = nonNilMessages(e.Messages)
		if len(e.EarlierMessages) > 0 {
			out["earlierMessages"] = e.EarlierMessages
		}
	case EventTurnEnd:
		out["message"] = e.Message
		out["toolResults"] = nonNilMessages(e.ToolResults)
	case EventMessageStart, EventMessageEnd:
		out["message"] = e.Message
	case EventMessageUpdate:
		out["message"] = e.Message
		out["assistantMessageEvent"] = e.AssistantMessageEvent
		if e.Attempt != 0 {
			out["attempt"] = e.Attempt
		}
		if e.Time != 0 {
			out["time"] = e.Time
		}
	case EventToolExecutionStart:
		out["toolCallId"], out["toolName"], out["args"] = e.ToolCallID, e.ToolName, args
	case EventToolExecutionUpdate:
		out["toolCallId"], out["toolName"], out["args"] = e.ToolCallID, e.ToolName, args
		out["partialResult"] = e.PartialResult
		// A live partial result (from a heartbeat, Seq 0) says which
		// attempt and when, as a live message_update does.
		if e.Attempt != 0 {
			out["attempt"] = e.Attempt
		}
		if e.Time != 0 {
			out["time"] = e.Time
		}
	case EventToolExecutionEnd:
		out["toolCallId"], out["toolName"] = e.ToolCallID, e.ToolName
		out["result"], out["isError"] = e.Result, e.IsError
	case EventCompactionStart, EventCompactionEnd:
		out["compaction"] = e.Compaction
	case EventApprovalRequest, EventApprovalDecision:
		out["toolCallId"], out["toolName"], out["approval"] = e.ToolCallID, e.ToolName, e.Approval
		if e.Type == EventApprovalRequest {
			out["args"] = args
		}
	default:
		type plain Event
		return json.Marshal(plain(e))
	}
	return json.Marshal(out)
}

func nonNilMessages(m []Message) []Message {
	if m == nil {
		return []Message{}
	}
	return m
}

// StreamEvent is one event of a model's response stream (pi-ai's
// AssistantMessageEvent): start, text_*, thinking_*, toolcall_*, done, error.
type StreamEvent struct {
	Type         string   `json:"type"`
	ContentIndex int      `json:"contentIndex,omitempty"`
	Delta        string   `json:"delta,omitempty"`
	Content      string   `json:"content,omitempty"`
	ToolCall     *Content `json:"toolCall,omitempty"`
	Reason       string   `json:"reason,omitempty"`
	Partial      *Message `json:"partial,omitempty"`
	Message      *Message `json:"message,omitempty"`
	Error        *Message `json:"error,omitempty"`
}

// Stream event types.
const (
	StreamStart         = "start"
	StreamTextStart     = "text_start"
	StreamTextDelta     = "text_delta"
	StreamTextEnd       = "text_end"
	StreamThinkingStart = "thinking_start"
	StreamThinkingDelta = "thinking_delta"
	StreamThinkingEnd   = "thinking_end"
	StreamToolCallStart = "toolcall_start"
	StreamToolCallDelta = "toolcall_delta"
	StreamToolCallEnd   = "toolcall_end"
	StreamDone          = "done"
	StreamError         = "error"
)
