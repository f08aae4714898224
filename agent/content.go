package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Content block types.
const (
	ContentText     = "text"
	ContentThinking = "thinking"
	ContentImage    = "image"
	ContentToolCall = "toolCall"
)

// Content is one block of a message: text, thinking, image or tool call.
// One struct rather than an interface keeps hand-written JSON and Temporal
// payloads simple; MarshalJSON writes exactly the fields pi writes for the
// block's type.
type Content struct {
	Type string `json:"type"`

	// text
	Text          string `json:"text,omitempty"`
	TextSignature string `json:"textSignature,omitempty"`

	// thinking
	Thinking          string `json:"thinking,omitempty"`
	ThinkingSignature string `json:"thinkingSignature,omitempty"`
	Redacted          bool   `json:"redacted,omitempty"`

	// image
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`

	// toolCall
	ID               string         `json:"id,omitempty"`
	Name             string         `json:"name,omitempty"`
	Arguments        map[string]any `json:"arguments,omitempty"`
	ThoughtSignature string         `json:"thoughtSignature,omitempty"`
	// RawArguments holds arguments that are valid JSON but not an object
	// (an array, a string, a number, null), as the model sent them; only
	// such calls carry it, and Arguments is then nil. pi keeps the value
	// and fails the call's validation with it; it is written back as the
	// block's "arguments", so a normal call's JSON is unchanged.
	RawArguments json.RawMessage `json:"-"`

	// Blob, when set, makes this block a stub for the block stored under
	// it (see BlobRef); only Type is kept beside it.
	Blob *BlobRef `json:"$blob,omitempty"`
}

// ArgumentsValue is a tool call's arguments as JSON has them: RawArguments
// when the call carries them, else the object (empty when nil).
func (c Content) ArgumentsValue() any {
	if len(c.RawArguments) > 0 {
		return c.RawArguments
	}
	if c.Arguments == nil {
		return map[string]any{}
	}
	return c.Arguments
}

// Text returns a text block.
func Text(s string) Content { return Content{Type: ContentText, Text: s} }

// Image returns an image block with base64 data.
func Image(data, mimeType string) Content {
	return Content{Type: ContentImage, Data: data, MimeType: mimeType}
}

// ToolCall returns a tool call block.
func ToolCall(id, name string, args map[string]any) Content {
	return Content{Type: ContentToolCall, ID: id, Name: name, Arguments: args}
}

type stubJSON struct {
	Type string   `json:"type"`
	Blob *BlobRef `json:"$blob"`
}

type textJSON struct {
	Type          string `json:"type"`
	Text          string `json:"text"`
	TextSignature string `json:"textSignature,omitempty"`
}

type thinkingJSON struct {
	Type              string `json:"type"`
	Thinking          string `json:"thinking"`
	ThinkingSignature string `json:"thinkingSignature,omitempty"`
	Redacted          bool   `json:"redacted,omitempty"`
}

type imageJSON struct {
	Type     string `json:"type"`
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
}

type toolCallJSON struct {
	Type             string         `json:"type"`
	ID               string         `json:"id"`
	Name             string         `json:"name"`
	Arguments        map[string]any `json:"arguments"`
	ThoughtSignature string         `json:"thoughtSignature,omitempty"`
}

type rawToolCallJSON struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	Name             string          `json:"name"`
	Arguments        json.RawMessage `json:"arguments"`
	ThoughtSignature string          `json:"thoughtSignature,omitempty"`
}

// UnmarshalJSON reads a tool call's arguments that are not an object into
// RawArguments (see there); everything else as the fields say.
func (c *Content) UnmarshalJSON(b []byte) error {
	type plain Content
	var raw struct {
		*plain
		Arguments json.RawMessage `json:"arguments"`
	}
	raw.plain = (*plain)(c)
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	args, rawArgs, err := SplitArguments(raw.Arguments)
	if err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	c.Arguments, c.RawArguments = args, rawArgs
	return nil
}

// SplitArguments decodes arguments as they appear in JSON: an object (or
// nothing) into a map, any other JSON value kept compacted as raw.
func SplitArguments(b json.RawMessage) (map[string]any, json.RawMessage, error) {
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return nil, nil, nil
	}
	if t[0] == '{' {
		var m map[string]any
		if err := json.Unmarshal(t, &m); err != nil {
			return nil, nil, err
		}
		return m, nil, nil
	}
	var out bytes.Buffer
	if err := json.Compact(&out, t); err != nil {
		return nil, nil, err
	}
	return nil, out.Bytes(), nil
}

// MarshalJSON writes the fields of the block's type only, with required
// fields present even when empty (a text block always has "text").
func (c Content) MarshalJSON() ([]byte, error) {
	if c.Blob != nil {
		return json.Marshal(stubJSON{c.Type, c.Blob})
	}
	switch c.Type {
	case ContentText:
		return json.Marshal(textJSON{c.Type, c.Text, c.TextSignature})
	case ContentThinking:
		return json.Marshal(thinkingJSON{c.Type, c.Thinking, c.ThinkingSignature, c.Redacted})
	case ContentImage:
		return json.Marshal(imageJSON{c.Type, c.Data, c.MimeType})
	case ContentToolCall:
		if len(c.RawArguments) > 0 {
			return json.Marshal(rawToolCallJSON{c.Type, c.ID, c.Name, c.RawArguments, c.ThoughtSignature})
		}
		args := c.Arguments
		if args == nil {
			args = map[string]any{}
		}
		return json.Marshal(toolCallJSON{c.Type, c.ID, c.Name, args, c.ThoughtSignature})
	default:
		type plain Content
		return json.Marshal(plain(c))
	}
}

// Validate reports a block that no provider could send: an unknown type or a
// block missing what its type requires.
func (c Content) Validate() error {
	if c.Blob != nil {
		if len(c.Blob.SHA256) != 64 {
			return fmt.Errorf("content stub needs a sha256 of 64 hex digits")
		}
		if c.Type == "" {
			return fmt.Errorf("content block has no type")
		}
		return nil
	}
	switch c.Type {
	case ContentText, ContentThinking:
		return nil
	case ContentImage:
		if c.Data == "" || c.MimeType == "" {
			return fmt.Errorf("image block needs data and mimeType")
		}
		return nil
	case ContentToolCall:
		if c.ID == "" || c.Name == "" {
			return fmt.Errorf("toolCall block needs id and name")
		}
		return nil
	case "":
		return fmt.Errorf("content block has no type")
	default:
		return fmt.Errorf("unknown content block type %q", c.Type)
	}
}

// TextOf joins the text blocks of content with newlines.
func TextOf(content []Content) string {
	out := ""
	for i, c := range content {
		if c.Type != ContentText {
			continue
		}
		if i > 0 && out != "" {
			out += "\n"
		}
		out += c.Text
	}
	return out
}
