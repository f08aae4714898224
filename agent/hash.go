package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Transcript is a context (system prompt and messages) with a hash chain
// over this build's JSON encoding of the messages. The workflow keeps one
// and sends the chain hash at its segments' end with each model turn, and
// continue-as-new carries it (Carry.Hash).
//
// The chain is a hash of re-encoded structs, so it agrees only between
// processes that encode messages alike: a deploy that adds or reorders a
// message field changes it. Workers therefore no longer check it (a prefix
// is identified by its stored segments, SegmentsHash); it is still computed
// and sent because workers of builds before that change check it, and it
// matches theirs whenever the two builds encode messages alike.
//
// A transcript may hold only its tail: Offset messages come before
// Messages, kept elsewhere (in the content store's segments), and the chain
// starts with their hash. The workflow holds only what the store does not
// have yet, so its memory and its continue-as-new input stay small however
// long the transcript grows.
type Transcript struct {
	SystemPrompt string
	// Offset is the number of messages before Messages.
	Offset int
	// Messages are messages [Offset, Len()).
	Messages []Message
	// chain[i] is the hash of the system prompt and the first Offset+i
	// messages.
	chain []string
	// sizes[i] is the JSON size of Messages[i].
	sizes []int
}

// NewTranscript starts a transcript with a system prompt.
func NewTranscript(systemPrompt string) *Transcript {
	sum := sha256.Sum256([]byte("system\x00" + systemPrompt))
	return &Transcript{SystemPrompt: systemPrompt, chain: []string{hex.EncodeToString(sum[:])}}
}

// NewTranscriptAt starts a transcript after offset messages held elsewhere,
// whose chain hash is hash.
func NewTranscriptAt(systemPrompt string, offset int, hash string) *Transcript {
	if offset == 0 && hash == "" {
		return NewTranscript(systemPrompt)
	}
	return &Transcript{SystemPrompt: systemPrompt, Offset: offset, chain: []string{hash}}
}

// Append adds messages and extends the chain. Hashing each message once
// keeps the cost proportional to new content, not to the transcript.
func (t *Transcript) Append(ms ...Message) {
	for _, m := range ms {
		b, err := json.Marshal(m)
		if err != nil {
			// Message marshalling only fails on non-JSON values in
			// arguments, which decoding never produces; hash the error so
			// the chain still moves.
			b = []byte(err.Error())
		}
		h := sha256.New()
		h.Write([]byte(t.chain[len(t.chain)-1]))
		h.Write(b)
		t.chain = append(t.chain, hex.EncodeToString(h.Sum(nil)))
		t.sizes = append(t.sizes, len(b))
		t.Messages = append(t.Messages, m)
	}
}

// Len is the number of messages, those before Offset included.
func (t *Transcript) Len() int { return t.Offset + len(t.Messages) }

// Size is the JSON size of the system prompt and the held messages in bytes.
func (t *Transcript) Size() int {
	n := len(t.SystemPrompt)
	for _, s := range t.sizes {
		n += s
	}
	return n
}

// SizeOf is the JSON size of messages [from, to), which must be held.
func (t *Transcript) SizeOf(from, to int) int {
	n := 0
	for _, s := range t.sizes[from-t.Offset : to-t.Offset] {
		n += s
	}
	return n
}

// MessageSize is the JSON size of message i, which must be held.
func (t *Transcript) MessageSize(i int) int { return t.sizes[i-t.Offset] }

// At returns message i, which must be held.
func (t *Transcript) At(i int) Message { return t.Messages[i-t.Offset] }

// Since returns messages [n, Len()); n must not be before Offset.
func (t *Transcript) Since(n int) []Message { return t.Messages[n-t.Offset:] }

// Range returns messages [from, to), which must be held.
func (t *Transcript) Range(from, to int) []Message { return t.Messages[from-t.Offset : to-t.Offset] }

// Last returns the last message, if the transcript has any. A transcript
// that holds none of its messages cannot say (ok false, Len() > 0).
func (t *Transcript) Last() (Message, bool) {
	if len(t.Messages) == 0 {
		return Message{}, false
	}
	return t.Messages[len(t.Messages)-1], true
}

// HashAt returns the hash of the system prompt and the first n messages, or
// "" when n is before Offset or after the end.
func (t *Transcript) HashAt(n int) string {
	i := n - t.Offset
	if i < 0 || i >= len(t.chain) {
		return ""
	}
	return t.chain[i]
}

// DropBefore forgets the messages before n (kept elsewhere); Len and the
// chain from n on are unchanged.
func (t *Transcript) DropBefore(n int) {
	i := n - t.Offset
	if i <= 0 {
		return
	}
	i = min(i, len(t.Messages))
	t.Messages = append([]Message(nil), t.Messages[i:]...)
	t.sizes = append([]int(nil), t.sizes[i:]...)
	t.chain = append([]string(nil), t.chain[i:]...)
	t.Offset += i
}

// Prefix returns a new transcript holding the messages up to n.
func (t *Transcript) Prefix(n int) *Transcript {
	n = min(max(n, t.Offset), t.Len())
	i := n - t.Offset
	return &Transcript{
		SystemPrompt: t.SystemPrompt,
		Offset:       t.Offset,
		Messages:     append([]Message(nil), t.Messages[:i]...),
		chain:        append([]string(nil), t.chain[:i+1]...),
		sizes:        append([]int(nil), t.sizes[:i]...),
	}
}

// SegmentsHash identifies the messages a list of segments holds by the
// bytes the content store holds: a hash of the segments' SHA-256s and
// message counts. Segments are content-addressed and every read checks the
// bytes against their SHA-256, so lists with one SegmentsHash hold the same
// system prompt and messages, whichever build wrote or reads them. Unlike
// the Transcript chain it does not depend on how a build encodes messages.
func SegmentsHash(segs []Segment) string {
	h := sha256.New()
	for _, s := range segs {
		fmt.Fprintf(h, "%s %d\n", s.Ref.SHA256, s.Count)
	}
	return hex.EncodeToString(h.Sum(nil))
}
