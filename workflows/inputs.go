package workflows

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/store"
)

// Large inputs. A person's message may be up to
// agentapi.MaxQueuedMessageBytes, and a model turn's input, a carry or a
// result must stay under Temporal's 2 MB payload limit: three 900 KB steering messages sent inline once
// made the next model turn's input 2.7 MB, and the server terminated the
// session. So the workflow holds, queues, carries and sends on stubs for
// every block over store.InlineLimit: agentclient stores them before it
// sends; what arrives inline anyway (the Temporal CLI, the Web UI) is
// stored by the StoreInputs local activity before it is queued or run.
// What stays inline is bounded in all by agentapi.MaxQueuedBytes.

// Change IDs. Histories recorded before them never stored inputs nor
// refused a queued message for the queues' total.
const (
	storeInputsChange = "store-large-inputs"
	queueCapChange    = "cap-queued-bytes"
)

// maxDropped bounds the dropped-message notes a run keeps and carries.
const maxDropped = 16

// inputState orders queued messages and notes the dropped ones.
type inputState struct {
	// Tickets: a message from an Update or a Signal is queued in the order
	// it arrived, though storing its content may take longer than storing
	// a later one's. next is the next ticket, served the next to queue.
	next, served int
	// dropped are notes of Signals the run could not take, newest last.
	dropped []agentapi.DroppedMessage
	// prompts is a session's prompt waiting to start (nil for AgentLoop).
	prompts func() []agent.Message
}

// largeBlock reports whether a block is stored rather than kept inline.
// Tool calls stay inline: the workflow reads their arguments.
func largeBlock(c agent.Content) bool {
	if c.Blob != nil || c.Type == agent.ContentToolCall {
		return false
	}
	if contentBytes([]agent.Content{c}) > store.InlineLimit {
		return true
	}
	b, _ := json.Marshal(c) // at most a few KB: escapes can grow it past the limit
	return len(b) > store.InlineLimit
}

func largeDetails(d json.RawMessage) bool {
	if len(d) <= store.InlineLimit {
		return false
	}
	_, stub := agent.DetailsBlob(d)
	return !stub
}

func hasLarge(ms []agent.Message) bool {
	for _, m := range ms {
		if largeDetails(m.Details) {
			return true
		}
		for _, c := range m.Content {
			if largeBlock(c) {
				return true
			}
		}
	}
	return false
}

// stubBytes bounds the JSON of a stub this workflow stores:
// {"type":"thinking","$blob":{"sha256":"<64 hex>","size":N,"scope":"<id>"}}.
func (l *loop) stubBytes() int {
	id, _ := json.Marshal(workflow.GetInfo(l.rootCtx).WorkflowExecution.ID)
	return 128 + len(id)
}

// inlineBytes is the JSON size of messages as the workflow holds them once
// their large content is stored, without encoding the large content.
func (l *loop) inlineBytes(ms ...agent.Message) int {
	stub := l.stubBytes()
	n := 0
	for _, m := range ms {
		rest := m
		rest.Content = nil
		if largeDetails(m.Details) {
			rest.Details = nil
			n += stub
		}
		b, _ := json.Marshal(rest)
		n += len(b)
		for _, c := range m.Content {
			if largeBlock(c) {
				n += stub + 1
				continue
			}
			b, _ := json.Marshal(c)
			n += len(b) + 1
		}
	}
	return n
}

// queuedBytes is what waits in the queues, as inlineBytes counts it.
func (l *loop) queuedBytes() (steering, followUps, prompts int) {
	steering = l.inlineBytes(l.steering.items...)
	followUps = l.inlineBytes(l.followUps.items...)
	if l.inputs.prompts != nil {
		prompts = l.inlineBytes(l.inputs.prompts()...)
	}
	return steering, followUps, prompts
}

// checkRoom refuses a message of n bytes (inlineBytes) that the queues
// have no room for, saying the limit and what is queued.
func (l *loop) checkRoom(n int) error {
	s, f, p := l.queuedBytes()
	if s+f+p+n <= agentapi.MaxQueuedBytes {
		return nil
	}
	return fmt.Errorf("the queues are full: they hold %d bytes (steering %d in %d messages, follow-ups %d in %d, prompt %d) "+
		"and this message adds %d; the limit is %d bytes in all, content blocks over %d bytes counting as %d-byte stubs: "+
		"send it when the run has taken what is queued",
		s+f+p, s, len(l.steering.items), f, len(l.followUps.items), p, n, agentapi.MaxQueuedBytes, store.InlineLimit, l.stubBytes())
}

// storeInputs returns messages with their large content stored (the
// StoreInputs local activity) and stubs in its place. A store that does
// not answer is waited for: for a few minutes when a client waits for
// the answer (bounded: the Update fails, the Signal is dropped with a
// note), for up to a day otherwise (a start input, a waiting prompt), as a
// store outage holds a stage.
func (l *loop) storeInputs(ctx workflow.Context, ms []agent.Message, bounded bool) ([]agent.Message, error) {
	if !hasLarge(ms) || workflow.GetVersion(ctx, storeInputsChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return ms, nil
	}
	opts := workflow.LocalActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: 30 * time.Second},
	}
	// The SDK bounds a local activity's retries by its schedule-to-close,
	// which defaults to its start-to-close.
	opts.ScheduleToCloseTimeout = 24 * time.Hour
	if bounded {
		opts.ScheduleToCloseTimeout = 3 * time.Minute
	}
	var out activities.StoreInputsOutput
	f := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(l.baseCtx, opts), a.StoreInputs,
		activities.StoreInputsInput{Messages: ms})
	if err := f.Get(ctx, &out); err != nil {
		return ms, fmt.Errorf("storing the message's large content: %w", err)
	}
	if len(out.Messages) != len(ms) {
		return ms, fmt.Errorf("storing the message's large content: %d messages came back for %d", len(out.Messages), len(ms))
	}
	return out.Messages, nil
}

// enqueue queues a message from an Update or a Signal once those that came
// before it are queued, its large content stored first. A message the
// queues have no room for once stored is refused (two Updates validated in
// one workflow task can both have passed checkRoom).
func (l *loop) enqueue(ctx workflow.Context, q *queue, m agent.Message) error {
	ticket := l.inputs.next
	l.inputs.next++
	stored, err := l.storeInputs(ctx, []agent.Message{m}, true)
	_ = workflow.Await(ctx, func() bool { return l.inputs.served >= ticket })
	l.inputs.served++
	if err != nil {
		return err
	}
	if err := l.checkRoom(l.inlineBytes(stored[0])); err != nil && l.capsQueues(ctx) {
		return err
	}
	q.push(stored[0])
	return nil
}

// capsQueues reports whether this run refuses what the queues' total has
// no room for (histories before queueCapChange took everything).
func (l *loop) capsQueues(ctx workflow.Context) bool {
	return workflow.GetVersion(ctx, queueCapChange, workflow.DefaultVersion, 1) == 1
}

// poll is a steering or follow-up poll: it takes what the queue holds
// once the messages that arrived before it are queued.
func (l *loop) poll(ctx workflow.Context, q *queue) []agent.Message {
	if l.inputs.served < l.inputs.next {
		_ = workflow.Await(ctx, func() bool { return l.inputs.served >= l.inputs.next })
		l.drainSignals(ctx)
	}
	return q.drain()
}

// receiveQueued takes a steer or followUp Signal. A Signal cannot be
// refused: one the run cannot take is dropped with a warning in the
// worker's log and a note in QueryState's dropped.
func (l *loop) receiveQueued(c workflow.ReceiveChannel, q *queue) {
	var m agent.Message
	if !c.ReceiveAsync(&m) {
		return
	}
	l.queueSignalled(c.Name(), q, m, false)
}

// queueSignalled queues a message that came by Signal (main coroutine).
func (l *loop) queueSignalled(channel string, q *queue, m agent.Message, prompt bool) {
	if !prompt {
		if err := checkQueuedMessage(&m, false); err != nil {
			l.dropSignal(channel, contentBytes(m.Content), "invalid message", err)
			return
		}
	}
	if l.dropsForeign(l.baseCtx, channel, []agent.Message{m}) {
		return
	}
	if err := l.checkRoom(l.inlineBytes(m)); err != nil && l.capsQueues(l.baseCtx) {
		l.dropSignal(channel, contentBytes(m.Content), "queues full", err)
		return
	}
	if err := l.enqueue(l.baseCtx, q, m); err != nil {
		l.dropSignal(channel, contentBytes(m.Content), "not queued", err)
	}
}

// dropSignal logs and notes a Signal of n bytes of content the run drops.
func (l *loop) dropSignal(channel string, n int, what string, err error) {
	workflow.GetLogger(l.rootCtx).Warn("Dropped a "+channel+" signal: "+what, "Channel", channel, "Error", err)
	l.inputs.dropped = append(l.inputs.dropped, agentapi.DroppedMessage{
		Signal: channel, Bytes: n, Reason: err.Error(), At: workflow.Now(l.rootCtx).UnixMilli()})
	if n := len(l.inputs.dropped) - maxDropped; n > 0 {
		l.inputs.dropped = append([]agentapi.DroppedMessage{}, l.inputs.dropped[n:]...)
	}
}

// resultBudget is what the result's messages may take: 1 MiB, less what
// the result's queues hold inline, so that the result stays under the
// payload limit with the queues full.
func (l *loop) resultBudget(ctx workflow.Context, res agentapi.AgentLoopResult) int {
	q := l.inlineBytes(res.Steering...) + l.inlineBytes(res.FollowUps...)
	if q == 0 || !l.capsQueues(ctx) {
		return maxResultBytes
	}
	return max(maxResultBytes-q, 0)
}

// storeStart stores the large content of a start input: messages (which
// the transcript already holds, and gets back as stubs) and the groups in
// more (prompts, queues), in one local activity.
func (l *loop) storeStart(ctx workflow.Context, messages []agent.Message, more ...*[]agent.Message) {
	all := slices.Clone(messages)
	for _, g := range more {
		all = append(all, *g...)
	}
	if !hasLarge(all) {
		return
	}
	stored, err := l.storeInputs(ctx, all, false)
	if err != nil {
		workflow.GetLogger(ctx).Error("Input's large content not stored; it stays inline", "Error", err)
		return
	}
	if hasLarge(messages) {
		l.context = agent.NewTranscript(l.context.SystemPrompt)
		l.context.Append(stored[:len(messages)]...)
	}
	stored = stored[len(messages):]
	for _, g := range more {
		n := len(*g)
		*g = stored[:n:n]
		stored = stored[n:]
	}
}

// storeNext stores the large content of the prompt waiting to start,
// before the run sends it to the model or a carry holds it. Nothing can
// replace s.next meanwhile: the session is busy.
func (s *session) storeNext(ctx workflow.Context) {
	if s.next == nil {
		return
	}
	stored, err := s.storeInputs(ctx, s.next.Prompts, false)
	if err != nil {
		workflow.GetLogger(ctx).Error("Prompt's large content not stored; it stays inline", "Error", err)
		return
	}
	s.next.Prompts = stored
}
