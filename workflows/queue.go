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
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(b) > MaxQueuedMessageBytes {
		return fmt.Errorf("message is %d bytes; the limit is %d", len(b), MaxQueuedMessageBytes)
	}
	return nil
}
