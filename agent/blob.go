package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// BlobRef names content kept in the content store (package store) instead
// of in Temporal's history: the SHA-256 of the stored bytes, their size, and
// the scope they were stored under (the workflow id of the run that stored
// them, so that a run's content can be deleted with its history).
//
// A content block or a tool result's details too large for history is
// replaced by a stub holding a BlobRef under the JSON key "$blob": a block
// {"type":"text","$blob":{...}} stands for the block stored under that
// hash, details {"$blob":{...}} for the details stored there. Activities
// and clients resolve stubs before anything shows or sends them; the
// workflow only passes them on.
type BlobRef struct {
	SHA256 string `json:"sha256"`
	Size   int    `json:"size"`
	Scope  string `json:"scope,omitempty"`
}

// String names the blob in errors and logs: "sha256:ab12… (48000 bytes)".
func (r BlobRef) String() string {
	h := r.SHA256
	if len(h) > 16 {
		h = h[:16] + "…"
	}
	return fmt.Sprintf("sha256:%s (%d bytes)", h, r.Size)
}

// BlobKey is the JSON key of a stub's reference.
const BlobKey = "$blob"

// IsStub reports whether a block stands for stored content.
func (c Content) IsStub() bool { return c.Blob != nil }

// StubContent returns the stub of a block stored under ref.
func StubContent(typ string, ref BlobRef) Content {
	return Content{Type: typ, Blob: &ref}
}

// StubDetails returns details that stand for details stored under ref.
func StubDetails(ref BlobRef) json.RawMessage {
	b, _ := json.Marshal(map[string]BlobRef{BlobKey: ref})
	return b
}

// DetailsBlob returns the reference of stub details.
func DetailsBlob(d json.RawMessage) (BlobRef, bool) {
	// Stub details are exactly {"$blob":{...}} (StubDetails writes them):
	// anything else is told apart without decoding it.
	if len(d) < len(BlobKey)+4 || !bytes.HasPrefix(bytes.TrimLeft(d, " \t\r\n"), []byte(`{"`+BlobKey+`"`)) {
		return BlobRef{}, false
	}
	var stub map[string]json.RawMessage
	if json.Unmarshal(d, &stub) != nil || len(stub) != 1 {
		return BlobRef{}, false
	}
	raw, ok := stub[BlobKey]
	if !ok {
		return BlobRef{}, false
	}
	var ref BlobRef
	if json.Unmarshal(raw, &ref) != nil || ref.SHA256 == "" {
		return BlobRef{}, false
	}
	return ref, true
}

// Segment is a run of transcript messages stored as one blob (package
// store writes and reads them): Count messages, following those of the
// segments before it in a list.
type Segment struct {
	Ref   BlobRef `json:"ref"`
	Count int     `json:"count"`
}

// SegmentsLen is the number of messages a list of segments holds.
func SegmentsLen(segs []Segment) int {
	n := 0
	for _, s := range segs {
		n += s.Count
	}
	return n
}

// MessageRange names messages [From, To) of the transcript the segments
// hold: what an agent_end event's messages were before the workflow run
// that emits it (a run continued as new in the middle).
type MessageRange struct {
	Segments []Segment `json:"segments"`
	From     int       `json:"from"`
	To       int       `json:"to"`
}
