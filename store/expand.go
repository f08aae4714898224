package store

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/durable-agents/agentloop/agent"
)

// Expander is a payload codec that shows stored content where history holds
// its stubs: decoding a JSON payload replaces every {"$blob": ...} object
// with the content stored under it. The codec server runs it after
// decryption, so the Web UI and `temporal workflow show --codec-endpoint`
// display tool output and answers as they were. Encoding passes payloads
// through. A stub whose content cannot be read stays a stub.
type Expander struct {
	Blobs Blobs
	// MaxBytes bounds the content expanded into one request's payloads
	// (default 4 MiB); stubs past it stay stubs.
	MaxBytes int
}

var _ converter.PayloadCodec = Expander{}

// Encode implements converter.PayloadCodec.
func (x Expander) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	return payloads, nil
}

// Decode implements converter.PayloadCodec.
func (x Expander) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	budget := x.MaxBytes
	if budget <= 0 {
		budget = 4 << 20
	}
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		out[i] = p
		if string(p.GetMetadata()[converter.MetadataEncoding]) != converter.MetadataEncodingJSON ||
			!bytes.Contains(p.GetData(), []byte(`"`+agent.BlobKey+`"`)) {
			continue
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(p.GetData()))
		dec.UseNumber()
		if dec.Decode(&v) != nil {
			continue
		}
		v = x.expand(ctx, v, &budget)
		data, err := json.Marshal(v)
		if err != nil {
			continue
		}
		out[i] = &commonpb.Payload{Metadata: p.GetMetadata(), Data: data}
	}
	return out, nil
}

// expand replaces the stubs in a decoded JSON value.
func (x Expander) expand(ctx context.Context, v any, budget *int) any {
	switch t := v.(type) {
	case map[string]any:
		if raw, ok := t[agent.BlobKey]; ok {
			if full, ok := x.fetch(ctx, raw, budget); ok {
				return full
			}
			return t
		}
		for k, e := range t {
			t[k] = x.expand(ctx, e, budget)
		}
	case []any:
		for i, e := range t {
			t[i] = x.expand(ctx, e, budget)
		}
	}
	return v
}

func (x Expander) fetch(ctx context.Context, raw any, budget *int) (any, bool) {
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, false
	}
	var ref agent.BlobRef
	if json.Unmarshal(b, &ref) != nil || ref.SHA256 == "" || ref.Size > *budget {
		return nil, false
	}
	data, err := x.Blobs.Get(ctx, ref)
	if err != nil {
		return nil, false
	}
	var full any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if dec.Decode(&full) != nil {
		return nil, false
	}
	*budget -= len(data)
	return full, true
}
