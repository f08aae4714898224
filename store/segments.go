package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/durable-agents/agentloop/agent"
)

// A transcript lives in the store as a list of segments, each a run of
// messages (with stubs for large content) in one blob; the first also holds
// the system prompt. History carries the list, not the messages: a model
// turn's input names the segments that hold the transcript so far and adds
// the messages since, and a run continuing as new hands on the list.
//
// The list stays short by merging, like a binary counter: every segment
// weighs more than all the segments after it together, so a list holds at
// most log2 of the transcript's size segments, and each message is
// rewritten into a larger segment at most that many times (segments are
// small JSON and compress well).

type segmentJSON struct {
	SystemPrompt string          `json:"systemPrompt,omitempty"`
	First        int             `json:"first"`
	Messages     []agent.Message `json:"messages"`
}

// PutSegment stores messages [first, first+len(ms)) of a transcript as one
// segment; the system prompt goes with the segment that starts at 0.
func PutSegment(ctx context.Context, b Blobs, scope, systemPrompt string, first int, ms []agent.Message) (agent.Segment, error) {
	seg := segmentJSON{First: first, Messages: ms}
	if first == 0 {
		seg.SystemPrompt = systemPrompt
	}
	if seg.Messages == nil {
		seg.Messages = []agent.Message{}
	}
	data, err := json.Marshal(seg)
	if err != nil {
		return agent.Segment{}, fmt.Errorf("encode transcript segment: %w", err)
	}
	ref, err := b.Put(ctx, scope, data)
	if err != nil {
		return agent.Segment{}, err
	}
	return agent.Segment{Ref: ref, Count: len(ms)}, nil
}

// ReadSegments reads a list of segments, concurrently, and returns the
// system prompt and the messages they hold in order.
func ReadSegments(ctx context.Context, b Blobs, segs []agent.Segment) (string, []agent.Message, error) {
	return readSegments(ctx, b, segs, 0)
}

// readSegments reads segments that hold messages from first on.
func readSegments(ctx context.Context, b Blobs, segs []agent.Segment, first int) (string, []agent.Message, error) {
	parts := make([]segmentJSON, len(segs))
	errs := make([]error, len(segs))
	var wg sync.WaitGroup
	for i, s := range segs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data, err := b.Get(ctx, s.Ref)
			if err != nil {
				errs[i] = err
				return
			}
			if err := json.Unmarshal(data, &parts[i]); err != nil {
				errs[i] = &ContentError{Ref: s.Ref, Err: fmt.Errorf("%w: not a transcript segment", ErrCorrupt)}
			}
		}()
	}
	wg.Wait()
	var system string
	var out []agent.Message
	for i, s := range segs {
		if errs[i] != nil {
			return "", nil, errs[i]
		}
		p := parts[i]
		if at := first + len(out); p.First != at || len(p.Messages) != s.Count {
			return "", nil, &ContentError{Ref: s.Ref, Err: fmt.Errorf(
				"%w: segment holds messages [%d, %d), the list expects [%d, %d)",
				ErrCorrupt, p.First, p.First+len(p.Messages), at, at+s.Count)}
		}
		if i == 0 {
			system = p.SystemPrompt
		}
		out = append(out, p.Messages...)
	}
	return system, out, nil
}

// ReadRange returns messages [from, to) of the transcript the segments
// hold, reading only the segments that overlap it.
func ReadRange(ctx context.Context, b Blobs, r agent.MessageRange) ([]agent.Message, error) {
	first, start := 0, 0
	var need []agent.Segment
	for _, s := range r.Segments {
		end := start + s.Count
		if end > r.From && start < r.To {
			if need == nil {
				first = start
			}
			need = append(need, s)
		}
		start = end
	}
	if start < r.To {
		return nil, fmt.Errorf("message range [%d, %d) is past the %d messages the segments hold", r.From, r.To, start)
	}
	_, ms, err := readSegments(ctx, b, need, first)
	if err != nil {
		return nil, err
	}
	return ms[r.From-first : r.To-first], nil
}

// PlanSegments says how to extend a list of segments holding the first
// agent.SegmentsLen(segs) messages to hold the first n: keep segs[:keep]
// and write one new segment of messages [from, n). weight(from, to) is the
// size of a run of messages; a segment's weight is its blob's size.
func PlanSegments(segs []agent.Segment, n int, weight func(from, to int) int) (keep, from int) {
	// The first segment that weighs no more than everything after it,
	// the new messages included, is merged with all that follows.
	after := weight(agent.SegmentsLen(segs), n)
	keep = len(segs)
	for i := len(segs) - 1; i >= 0; i-- {
		if segs[i].Ref.Size <= after {
			keep = i
		}
		after += segs[i].Ref.Size
	}
	return keep, agent.SegmentsLen(segs[:keep])
}
