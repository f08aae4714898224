package agent

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Message roles.
const (
	RoleUser       = "user"
	RoleAssistant  = "assistant"
	RoleToolResult = "toolResult"
)

// StopReason says why an assistant message ended.
type StopReason string

// Stop reasons, as pi-ai names them.
const (
	StopReasonStop    StopReason = "stop"
	StopReasonLength  StopReason = "length"
	StopReasonToolUse StopReason = "toolUse"
	StopReasonError   StopReason = "error"
	StopReasonAborted StopReason = "aborted"
)

// AbortedErrorMessage is the errorMessage of an assistant message for a model
// call made after the run was aborted (pi-ai's text).
const AbortedErrorMessage = "Request was aborted"

// Cost is a usage's price in US dollars.
type Cost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"`
}

// Usage counts the tokens of one model call, or of a run when summed.
type Usage struct {
	Input       int64 `json:"input"`
	Output      int64 `json:"output"`
	CacheRead   int64 `json:"cacheRead"`
	CacheWrite  int64 `json:"cacheWrite"`
	TotalTokens int64 `json:"totalTokens"`
	Cost        Cost  `json:"cost"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		Input:       u.Input + o.Input,
		Output:      u.Output + o.Output,
		CacheRead:   u.CacheRead + o.CacheRead,
		CacheWrite:  u.CacheWrite + o.CacheWrite,
		TotalTokens: u.TotalTokens + o.TotalTokens,
		Cost: Cost{
			Input:      u.Cost.Input + o.Cost.Input,
			Output:     u.Cost.Output + o.Cost.Output,
			CacheRead:  u.Cost.CacheRead + o.Cost.CacheRead,
			CacheWrite: u.Cost.CacheWrite + o.Cost.CacheWrite,
			Total:      u.Cost.Total + o.Cost.Total,
		},
	}
}

// Message is a user, assistant or tool-result message. The fields used
// depend on Role; MarshalJSON writes the fields pi writes for that role.
type Message struct {
	Role    string    `json:"role"`
	Content []Content `json:"content"`

	// assistant
	API           string     `json:"api,omitempty"`
	Provider      string     `json:"provider,omitempty"`
	Model         string     `json:"model,omitempty"`
	ResponseModel string     `json:"responseModel,omitempty"`
	ResponseID    string     `json:"responseId,omitempty"`
	Usage         *Usage     `json:"usage,omitempty"`
	StopReason    StopReason `json:"stopReason,omitempty"`
	ErrorMessage  string     `json:"errorMessage,omitempty"`

	// toolResult
	ToolCallID string          `json:"toolCallId,omitempty"`
	ToolName   string          `json:"toolName,omitempty"`
	Details    json.RawMessage `json:"details,omitempty"`
	IsError    bool            `json:"isError,omitempty"`

	// Timestamp is milliseconds since the Unix epoch.
	Timestamp int64 `json:"timestamp"`
}

// UserText returns a user message with one text block, as pi's Agent builds
// it from a text prompt.
func UserText(text string, timestamp int64) Message {
	return Message{Role: RoleUser, Content: []Content{Text(text)}, Timestamp: timestamp}
}

// ToolCalls returns the tool call blocks of an assistant message in order.
func (m Message) ToolCalls() []Content {
	var calls []Content
	for _, c := range m.Content {
		if c.Type == ContentToolCall {
			calls = append(calls, c)
		}
	}
	return calls
}

type userJSON struct {
	Role      string    `json:"role"`
	Content   []Content `json:"content"`
	Timestamp int64     `json:"timestamp"`
}

type assistantJSON struct {
	Role          string     `json:"role"`
	Content       []Content  `json:"content"`
	API           string     `json:"api"`
	Provider      string     `json:"provider"`
	Model         string     `json:"model"`
	ResponseModel string     `json:"responseModel,omitempty"`
	ResponseID    string     `json:"responseId,omitempty"`
	Usage         Usage      `json:"usage"`
	StopReason    StopReason `json:"stopReason"`
	ErrorMessage  string     `json:"errorMessage,omitempty"`
	Timestamp     int64      `json:"timestamp"`
}

type toolResultJSON struct {
	Role       string          `json:"role"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Content    []Content       `json:"content"`
	Details    json.RawMessage `json:"details"`
	IsError    bool            `json:"isError"`
	Timestamp  int64           `json:"timestamp"`
}

func nonNil(c []Content) []Content {
	if c == nil {
		return []Content{}
	}
	return c
}

// MarshalJSON writes the message in pi's shape for its role.
func (m Message) MarshalJSON() ([]byte, error) {
	switch m.Role {
	case RoleUser:
		return json.Marshal(userJSON{m.Role, nonNil(m.Content), m.Timestamp})
	case RoleAssistant:
		var usage Usage
		if m.Usage != nil {
			usage = *m.Usage
		}
		return json.Marshal(assistantJSON{m.Role, nonNil(m.Content), m.API, m.Provider, m.Model,
			m.ResponseModel, m.ResponseID, usage, m.StopReason, m.ErrorMessage, m.Timestamp})
	case RoleToolResult:
		return json.Marshal(toolResultJSON{m.Role, m.ToolCallID, m.ToolName, nonNil(m.Content),
			DetailsOrEmpty(m.Details), m.IsError, m.Timestamp})
	default:
		type plain Message
		return json.Marshal(plain(m))
	}
}

// UnmarshalJSON accepts pi's shapes. A user message whose content is a plain
// string (pi allows it) becomes one text block, so the rest of the code only
// sees blocks.
func (m *Message) UnmarshalJSON(b []byte) error {
	type plain Message
	var raw struct {
		plain
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*m = Message(raw.plain)
	m.Content = nil
	if len(raw.Content) == 0 || string(raw.Content) == "null" {
		return nil
	}
	if raw.Content[0] == '"' {
		var s string
		if err := json.Unmarshal(raw.Content, &s); err != nil {
			return err
		}
		m.Content = []Content{Text(s)}
		return nil
	}
	return json.Unmarshal(raw.Content, &m.Content)
}

// Validate reports what makes m unusable as a message in a transcript.
func (m Message) Validate() error {
	switch m.Role {
	case RoleUser, RoleAssistant:
	case RoleToolResult:
		if m.ToolCallID == "" {
			return errors.New("toolResult message needs toolCallId")
		}
	case "":
		return errors.New("message has no role")
	default:
		return fmt.Errorf("unknown message role %q (want user, assistant or toolResult)", m.Role)
	}
	for i, c := range m.Content {
		if err := c.Validate(); err != nil {
			return fmt.Errorf("content[%d]: %w", i, err)
		}
	}
	return nil
}

// IsEmpty reports whether a message carries no text, image or tool call.
func (m Message) IsEmpty() bool {
	for _, c := range m.Content {
		if c.Blob != nil {
			return false
		}
		switch c.Type {
		case ContentText:
			if c.Text != "" {
				return false
			}
		case ContentThinking:
			if c.Thinking != "" {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// DetailsOrEmpty returns details, or {} when there are none, as pi writes
// error results.
func DetailsOrEmpty(d json.RawMessage) json.RawMessage {
	if len(d) == 0 || string(d) == "null" {
		return json.RawMessage("{}")
	}
	return d
}
