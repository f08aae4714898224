package agent

import (
	"encoding/json"
)

// ToolResult is what a tool returns (pi's AgentToolResult): content for the
// model, details for clients, and terminate to end the run after this batch
// when every result of the batch asks for it. It has no isError: a tool
// signals an error by failing, and only an after hook can set isError.
type ToolResult struct {
	Content   []Content       `json:"content"`
	Details   json.RawMessage `json:"details"`
	Terminate bool            `json:"terminate,omitempty"`
}

// ErrorResult is the result the loop builds for a failed call: one text block
// with the message and empty details (pi's createErrorToolResult).
func ErrorResult(message string) ToolResult {
	return ToolResult{Content: []Content{Text(message)}, Details: json.RawMessage("{}")}
}

// TextResult is a result with one text block and empty details.
func TextResult(text string) ToolResult {
	return ToolResult{Content: []Content{Text(text)}, Details: json.RawMessage("{}")}
}

// MarshalJSON writes content and details even when empty.
func (r ToolResult) MarshalJSON() ([]byte, error) {
	type plain ToolResult
	p := plain(r)
	p.Content = nonNil(p.Content)
	p.Details = DetailsOrEmpty(p.Details)
	return json.Marshal(p)
}

// ExecutionMode is a tool's scheduling preference within a batch.
type ExecutionMode string

// Execution modes. One sequential tool in a batch makes the batch sequential.
const (
	ExecutionParallel   ExecutionMode = "parallel"
	ExecutionSequential ExecutionMode = "sequential"
)

// QueueMode says how many queued messages one poll of a queue takes.
type QueueMode string

// Queue modes, as pi's Agent names them.
const (
	QueueOneAtATime QueueMode = "one-at-a-time"
	QueueAll        QueueMode = "all"
)

// ToolResultMessage builds the transcript message for a finished call, with
// exactly pi's fields (terminate is not kept).
func ToolResultMessage(call Content, result ToolResult, isError bool, timestamp int64) Message {
	return Message{
		Role:       RoleToolResult,
		ToolCallID: call.ID,
		ToolName:   call.Name,
		Content:    nonNil(result.Content),
		Details:    DetailsOrEmpty(result.Details),
		IsError:    isError,
		Timestamp:  timestamp,
	}
}
