package agent

import (
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

	// Blob, when set, makes this block a stub for the block stored under
	// it (see BlobRef); only Type is kept beside it.
	Blob *BlobRef `json:"$blob,omitempty"`
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
