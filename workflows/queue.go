package workflows

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/durable-agents/agentloop/agent"
)

// MaxQueuedMessageBytes bounds one steering or follow-up message: it enters
// history as an Update or Signal payload and again in a model turn's input.
const MaxQueuedMessageBytes = 1 << 20

// queue is pi's PendingMessageQueue: "all" drains everything, "one-at-a-time"
// drains the oldest message.
type queue struct {
	mode  agent.QueueMode
	items []agent.Message
}

func (q *queue) push(m agent.Message) { q.items = append(q.items, m) }

func (q *queue) drain() []agent.Message {
	if len(q.items) == 0 {
		return nil
	}
	if q.mode == agent.QueueAll {
		all := q.items
		q.items = nil
		return all
	}
	first := q.items[0]
	q.items = q.items[1:]
	return []agent.Message{first}
}

// checkQueuedMessage validates a steering or follow-up message. A missing
// role means user, so `{"content": "use tabs"}` is enough from the CLI.
// Messages from people must say something; pi itself, and so tools and the
// run's input, may queue an empty one.
func checkQueuedMessage(m *agent.Message, allowEmpty bool) error {
	if m.Role == "" {
		m.Role = agent.RoleUser
	}
	if m.Role != agent.RoleUser {
		return fmt.Errorf("queued messages must have role user, not %q", m.Role)
	}
	if !allowEmpty && (len(m.Content) == 0 || m.IsEmpty()) {
		return errors.New(`message is empty: send {"content": "your text"}`)
	}
	if err := m.Validate(); err != nil {
		return err
	}
	// The strings alone can be over the limit: refuse without encoding
	// them. Encoding megabytes in a validator can take over a second of a
	// starved CPU, which the SDK then fails as a deadlocked workflow task.
	if n := contentBytes(m.Content); n > MaxQueuedMessageBytes {
		return fmt.Errorf("message is at least %d bytes; the limit is %d", n, MaxQueuedMessageBytes)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(b) > MaxQueuedMessageBytes {
		return fmt.Errorf("message is %d bytes; the limit is %d", len(b), MaxQueuedMessageBytes)
	}
	return nil
}

// contentBytes is the length of the content's strings, a lower bound of
// its JSON encoding.
func contentBytes(content []agent.Content) int {
	n := 0
	for _, c := range content {
		n += len(c.Text) + len(c.TextSignature) + len(c.Thinking) + len(c.ThinkingSignature) + len(c.Data) + len(c.MimeType)
	}
	return n
}
