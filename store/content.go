package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/durable-agents/agentloop/agent"
)

// Blobs is what moving content in and out of the store needs: *Store, or
// anything that keeps bytes by their SHA-256.
type Blobs interface {
	// Put stores data under scope and returns its reference. Storing the
	// same bytes again returns the same reference and stores nothing new.
	Put(ctx context.Context, scope string, data []byte) (agent.BlobRef, error)
	// Get returns the bytes of ref, checked against its hash.
	Get(ctx context.Context, ref agent.BlobRef) ([]byte, error)
}

// InlineLimit is the largest JSON a content block or a result's details may
// have and still travel inline. Larger ones are stored and replaced by a
// stub of about 150 bytes: a 48 KB tool output costs history a stub, not
// 48 KB, wherever it goes (the result, the next model turn's input, events).
// Small content stays inline, where the Web UI and the CLI show it as it is.
const InlineLimit = 2 << 10

// OffloadContent stores each block over InlineLimit and returns the blocks
// with stubs in their place. Tool calls stay inline: the workflow reads
// their arguments (approval rules, summaries, events).
func OffloadContent(ctx context.Context, b Blobs, scope string, cs []agent.Content) ([]agent.Content, error) {
	var out []agent.Content
	for i, c := range cs {
		if c.Blob != nil || c.Type == agent.ContentToolCall {
			continue
		}
		data, err := json.Marshal(c)
		if err != nil {
			return nil, fmt.Errorf("encode content block: %w", err)
		}
		if len(data) <= InlineLimit {
			continue
		}
		ref, err := b.Put(ctx, scope, data)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = slices.Clone(cs)
		}
		out[i] = agent.StubContent(c.Type, ref)
	}
	if out == nil {
		return cs, nil
	}
	return out, nil
}

// OffloadDetails stores details over InlineLimit and returns stub details.
func OffloadDetails(ctx context.Context, b Blobs, scope string, d json.RawMessage) (json.RawMessage, error) {
	if len(d) <= InlineLimit {
		return d, nil
	}
	if _, ok := agent.DetailsBlob(d); ok {
		return d, nil
	}
	ref, err := b.Put(ctx, scope, d)
	if err != nil {
		return nil, err
	}
	return agent.StubDetails(ref), nil
}

// OffloadResult stores the large parts of a tool result.
func OffloadResult(ctx context.Context, b Blobs, scope string, r agent.ToolResult) (agent.ToolResult, error) {
	var err error
	if r.Content, err = OffloadContent(ctx, b, scope, r.Content); err != nil {
		return r, err
	}
	if r.Details, err = OffloadDetails(ctx, b, scope, r.Details); err != nil {
		return r, err
	}
	return r, nil
}

// OffloadMessage stores the large parts of a message.
func OffloadMessage(ctx context.Context, b Blobs, scope string, m agent.Message) (agent.Message, error) {
	var err error
	if m.Content, err = OffloadContent(ctx, b, scope, m.Content); err != nil {
		return m, err
	}
	if m.Details, err = OffloadDetails(ctx, b, scope, m.Details); err != nil {
		return m, err
	}
	return m, nil
}

// ResolveContent returns the blocks with every stub replaced by the block
// it stands for.
func ResolveContent(ctx context.Context, b Blobs, cs []agent.Content) ([]agent.Content, error) {
	var out []agent.Content
	for i, c := range cs {
		if c.Blob == nil {
			continue
		}
		data, err := b.Get(ctx, *c.Blob)
		if err != nil {
			return nil, err
		}
		var full agent.Content
		if err := json.Unmarshal(data, &full); err != nil || full.Blob != nil {
			return nil, &ContentError{Ref: *c.Blob, Err: fmt.Errorf("%w: not a content block", ErrCorrupt)}
		}
		if out == nil {
			out = slices.Clone(cs)
		}
		out[i] = full
	}
	if out == nil {
		return cs, nil
	}
	return out, nil
}

// ResolveDetails returns the details stub details stand for.
func ResolveDetails(ctx context.Context, b Blobs, d json.RawMessage) (json.RawMessage, error) {
	ref, ok := agent.DetailsBlob(d)
	if !ok {
		return d, nil
	}
	data, err := b.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	if !json.Valid(data) {
		return nil, &ContentError{Ref: ref, Err: fmt.Errorf("%w: not JSON", ErrCorrupt)}
	}
	return data, nil
}

// ResolveResult resolves the stubs of a tool result.
func ResolveResult(ctx context.Context, b Blobs, r agent.ToolResult) (agent.ToolResult, error) {
	var err error
	if r.Content, err = ResolveContent(ctx, b, r.Content); err != nil {
		return r, err
	}
	if r.Details, err = ResolveDetails(ctx, b, r.Details); err != nil {
		return r, err
	}
	return r, nil
}

// ResolveMessage resolves the stubs of a message.
func ResolveMessage(ctx context.Context, b Blobs, m agent.Message) (agent.Message, error) {
	var err error
	if m.Content, err = ResolveContent(ctx, b, m.Content); err != nil {
		return m, err
	}
	if m.Details, err = ResolveDetails(ctx, b, m.Details); err != nil {
		return m, err
	}
	return m, nil
}

// ResolveMessages resolves the stubs of every message, into a new slice.
func ResolveMessages(ctx context.Context, b Blobs, ms []agent.Message) ([]agent.Message, error) {
	out := make([]agent.Message, len(ms))
	for i, m := range ms {
		r, err := ResolveMessage(ctx, b, m)
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

// HasStubs reports whether a message holds any stub.
func HasStubs(m agent.Message) bool {
	for _, c := range m.Content {
		if c.Blob != nil {
			return true
		}
	}
	_, ok := agent.DetailsBlob(m.Details)
	return ok
}

// ResolveEvent returns an event with every stub it carries resolved: the
// message, the tool results and partial result, and an agent_end's
// messages, those before the workflow run that emitted it included.
func ResolveEvent(ctx context.Context, b Blobs, e agent.Event) (agent.Event, error) {
	var err error
	if e.Message != nil {
		m, err := ResolveMessage(ctx, b, *e.Message)
		if err != nil {
			return e, err
		}
		e.Message = &m
	}
	if len(e.EarlierMessages) > 0 {
		var earlier []agent.Message
		for _, r := range e.EarlierMessages {
			ms, err := ReadRange(ctx, b, r)
			if err != nil {
				return e, err
			}
			earlier = append(earlier, ms...)
		}
		e.Messages = append(earlier, e.Messages...)
		e.EarlierMessages = nil
	}
	if c := e.Compaction; c != nil && c.Result != nil && c.Result.Summary != nil {
		m, err := ResolveMessage(ctx, b, *c.Result.Summary)
		if err != nil {
			return e, err
		}
		info, result := *c, *c.Result
		result.Summary = &m
		info.Result = &result
		e.Compaction = &info
	}
	if e.Messages != nil {
		if e.Messages, err = ResolveMessages(ctx, b, e.Messages); err != nil {
			return e, err
		}
	}
	if e.ToolResults != nil {
		if e.ToolResults, err = ResolveMessages(ctx, b, e.ToolResults); err != nil {
			return e, err
		}
	}
	for _, r := range []**agent.ToolResult{&e.Result, &e.PartialResult} {
		if *r == nil {
			continue
		}
		full, err := ResolveResult(ctx, b, **r)
		if err != nil {
			return e, err
		}
		*r = &full
	}
	return e, nil
}

// LostText is the text of the block that stands in the model's context for
// content missing from the store: pi-shaped (a text block), so the model
// sees that something was there and the session goes on.
func LostText(sha string) string { return "[content lost: sha256 " + sha + "]" }

// ResolveMessageOrLost resolves m's stubs as ResolveMessage does, except
// that a block whose blob is missing (ErrMissing) becomes a text block of
// LostText, and details whose blob is missing become none; lost is called
// with each such reference. Every other error, a corrupt blob included,
// is returned: a hash mismatch means the store holds wrong bytes under a
// key, which a placeholder would hide rather than survive.
func ResolveMessageOrLost(ctx context.Context, b Blobs, m agent.Message, lost func(agent.BlobRef)) (agent.Message, error) {
	out := m
	cloned := false
	for i, c := range m.Content {
		if c.Blob == nil {
			continue
		}
		full, err := ResolveContent(ctx, b, m.Content[i:i+1])
		if errors.Is(err, ErrMissing) {
			lost(*c.Blob)
			full = []agent.Content{{Type: agent.ContentText, Text: LostText(c.Blob.SHA256)}}
		} else if err != nil {
			return m, err
		}
		if !cloned {
			out.Content, cloned = slices.Clone(m.Content), true
		}
		out.Content[i] = full[0]
	}
	d, err := ResolveDetails(ctx, b, m.Details)
	if ref, ok := agent.DetailsBlob(m.Details); ok && errors.Is(err, ErrMissing) {
		lost(ref)
		d, err = nil, nil
	}
	if err != nil {
		return m, err
	}
	out.Details = d
	return out, nil
}
