package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Transcript is a context (system prompt and messages) with a hash chain, so
// that two processes can agree on a prefix by exchanging its length and one
// hash. The workflow keeps one; the model-turn activity's cache keeps
// another and checks that its prefix is the workflow's before using it.
type Transcript struct {
	SystemPrompt string
	Messages     []Message
	// chain[i] is the hash of the system prompt and Messages[:i].
	chain []string
	// sizes[i] is the JSON size of Messages[i].
	sizes []int
}

// NewTranscript starts a transcript with a system prompt.
func NewTranscript(systemPrompt string) *Transcript {
	sum := sha256.Sum256([]byte("system\x00" + systemPrompt))
	return &Transcript{SystemPrompt: systemPrompt, chain: []string{hex.EncodeToString(sum[:])}}
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

// Len is the number of messages.
func (t *Transcript) Len() int { return len(t.Messages) }

// Size is the JSON size of the system prompt and the messages in bytes.
func (t *Transcript) Size() int {
	n := len(t.SystemPrompt)
	for _, s := range t.sizes {
		n += s
	}
	return n
}

// MessageSize is the JSON size of message i.
func (t *Transcript) MessageSize(i int) int { return t.sizes[i] }

// HashAt returns the hash of the system prompt and the first n messages.
func (t *Transcript) HashAt(n int) string {
	if n < 0 || n >= len(t.chain) {
		return ""
	}
	return t.chain[n]
}

// Prefix returns a new transcript holding the first n messages.
func (t *Transcript) Prefix(n int) *Transcript {
	n = min(max(n, 0), len(t.Messages))
	return &Transcript{
		SystemPrompt: t.SystemPrompt,
		Messages:     append([]Message(nil), t.Messages[:n]...),
		chain:        append([]string(nil), t.chain[:n+1]...),
		sizes:        append([]int(nil), t.sizes[:n]...),
	}
}
