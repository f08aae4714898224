package workflows

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// queue is pi's PendingMessageQueue: "all" drains everything, "one-at-a-time"
// drains the oldest message.
type queue struct {
	mode  agent.QueueMode
	items []agent.Message
	// from[i] is the tool call attempt that queued items[i] (zero for a
	// person's message). It is nil until a tool queues a message, and kept
	// only while the run's workflow runs: queues are polled at turn
	// boundaries, where continue-as-new happens, after every call ended.
	from []toolAttempt
}

// toolAttempt is one attempt of a tool call's execute activity; callID is
// the call's attemptKey.
type toolAttempt struct {
	callID  string
	attempt int32
}

func (q *queue) push(m agent.Message) { q.pushFrom(m, toolAttempt{}) }

func (q *queue) pushFrom(m agent.Message, from toolAttempt) {
	if from != (toolAttempt{}) && (q.from == nil || len(q.from) != len(q.items)) {
		// A queue set from a run's input or a continue-as-new has no from.
		q.from = make([]toolAttempt, len(q.items))
	}
	q.items = append(q.items, m)
	if q.from != nil {
		q.from = append(q.from, from)
	}
}

func (q *queue) drain() []agent.Message {
	if len(q.items) == 0 {
		return nil
	}
	if q.mode == agent.QueueAll {
		all := q.items
		q.items, q.from = nil, nil
		return all
	}
	if len(q.from) == len(q.items) {
		q.from = q.from[1:]
	} else {
		q.from = nil
	}
	first := q.items[0]
	q.items = q.items[1:]
	return []agent.Message{first}
}

// dropEarlierAttempts removes the messages an earlier attempt of the call
// queued and reports how many it removed.
func (q *queue) dropEarlierAttempts(callID string, attempt int32) int {
	if len(q.from) != len(q.items) {
		return 0
	}
	dropped := 0
	items, from := q.items[:0], q.from[:0]
	for i, m := range q.items {
		if f := q.from[i]; f.callID == callID && f.attempt < attempt {
			dropped++
			continue
		}
		items, from = append(items, m), append(from, q.from[i])
	}
	q.items, q.from = items, from
	return dropped
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
	if n := contentBytes(m.Content); n > agentapi.MaxQueuedMessageBytes {
		return fmt.Errorf("message is at least %d bytes; the limit is %d", n, agentapi.MaxQueuedMessageBytes)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(b) > agentapi.MaxQueuedMessageBytes {
		return fmt.Errorf("message is %d bytes; the limit is %d", len(b), agentapi.MaxQueuedMessageBytes)
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
