package llm

import (
	"slices"
	"unsafe"

	"github.com/durable-agents/agentloop/agent"
)

// assembler builds an assistant message from a provider's stream and emits
// pi-ai's stream events for it, each carrying a snapshot of the message so
// far. Every provider drives one, so all of them produce the same event
// sequence: start, then per block *_start, *_delta..., *_end, then done or
// error.
type assembler struct {
	msg   agent.Message
	usage agent.Usage
	price Price
	emit  func(agent.StreamEvent)
	// partialJSON is the argument text received so far, by content index
	// of a tool call block.
	partialJSON map[int]*toolArgs
	// parsedBytes counts the argument text parsed while streaming, for
	// the test that keeps it linear.
	parsedBytes int
	// texts holds the bytes of each text or thinking block's string (see
	// appendText).
	texts map[int][]byte
}

// toolArgs is a tool call's argument JSON as it arrives, appended in place
// (adding each fragment to a string copied the whole text every time).
type toolArgs struct {
	text []byte
	// parsed is the text's length when the arguments were last parsed.
	parsed int
}

// eagerArgsBytes is how long argument text is parsed again on every
// fragment, so that each partial message carries every argument so far, as
// pi's do. Past it the text is parsed again once it has grown by a quarter:
// parsing the whole text on every fragment of a few bytes costs the square
// of its length (64 KB took 8 s, 1 MB would take most of an hour), which an
// answer may not make the worker pay. Partial arguments are for watchers;
// the block's end and the message's parse everything received.
const eagerArgsBytes = 8 << 10

func newAssembler(api, provider, model string, price Price, emit func(agent.StreamEvent)) *assembler {
	if emit == nil {
		emit = func(agent.StreamEvent) {}
	}
	return &assembler{
		msg: agent.Message{
			Role:       agent.RoleAssistant,
			Content:    []agent.Content{},
			API:        api,
			Provider:   provider,
			Model:      model,
			StopReason: agent.StopReasonStop,
		},
		price:       price,
		emit:        emit,
		partialJSON: map[int]*toolArgs{},
		texts:       map[int][]byte{},
	}
}

// appendText adds a delta to block i's text or thinking, *s, in amortized
// constant time. s += delta copied the whole text for every delta, the
// square of its length (a 1 MB answer in 4-byte deltas took two minutes).
// The block's strings are views of one append-only buffer: bytes below a
// view's length are never written again, and a buffer that grows is copied
// to a new one, so every string already handed out (each event's partial
// message keeps one) stays as it was, as strings must.
func (a *assembler) appendText(i int, s *string, delta string) {
	buf := a.texts[i]
	if len(buf) != len(*s) || len(buf) > 0 && unsafe.StringData(*s) != unsafe.SliceData(buf) {
		// The text was set elsewhere (a provider's final form of it).
		buf = append([]byte(nil), *s...)
	}
	buf = append(buf, delta...)
	a.texts[i] = buf
	*s = unsafe.String(unsafe.SliceData(buf), len(buf))
}

// setArgs replaces a tool call's argument text.
func (a *assembler) setArgs(i int, text string) { a.partialJSON[i] = &toolArgs{text: []byte(text)} }

// argsText is a tool call's argument text so far.
func (a *assembler) argsText(i int) string {
	if t := a.partialJSON[i]; t != nil {
		return string(t.text)
	}
	return ""
}

// parseArgs sets a tool call's arguments from its text so far.
func (a *assembler) parseArgs(i int) {
	t := a.partialJSON[i]
	setToolArguments(&a.msg.Content[i], string(t.text))
	a.parsedBytes += len(t.text)
	t.parsed = len(t.text)
}

// snapshot copies the message so a consumer may keep it while the stream
// goes on; strings and argument maps are never mutated, so a shallow copy
// of the blocks is enough.
func (a *assembler) snapshot() *agent.Message {
	m := a.msg
	m.Content = slices.Clone(a.msg.Content)
	u := a.usage
	m.Usage = &u
	return &m
}

func (a *assembler) start() {
	a.emit(agent.StreamEvent{Type: agent.StreamStart, Partial: a.snapshot()})
}

// setUsage records the provider's token counts and prices them.
func (a *assembler) setUsage(u agent.Usage) {
	a.price.fill(&u)
	a.usage = u
}

// startBlock appends a block and announces it; it returns the block's
// content index.
func (a *assembler) startBlock(c agent.Content) int {
	a.msg.Content = append(a.msg.Content, c)
	i := len(a.msg.Content) - 1
	a.emit(agent.StreamEvent{Type: blockKind(c) + "_start", ContentIndex: i, Partial: a.snapshot()})
	return i
}

func blockKind(c agent.Content) string {
	switch c.Type {
	case agent.ContentText:
		return "text"
	case agent.ContentThinking:
		return "thinking"
	default:
		return "toolcall"
	}
}

func (a *assembler) textDelta(i int, delta string) {
	a.appendText(i, &a.msg.Content[i].Text, delta)
	a.emit(agent.StreamEvent{Type: agent.StreamTextDelta, ContentIndex: i, Delta: delta, Partial: a.snapshot()})
}

func (a *assembler) thinkingDelta(i int, delta string) {
	a.appendText(i, &a.msg.Content[i].Thinking, delta)
	a.emit(agent.StreamEvent{Type: agent.StreamThinkingDelta, ContentIndex: i, Delta: delta, Partial: a.snapshot()})
}

// toolDelta adds a fragment of a tool call's argument JSON; the partial
// message carries the arguments parsed so far, as in pi.
func (a *assembler) toolDelta(i int, delta string) {
	t := a.partialJSON[i]
	if t == nil {
		t = &toolArgs{}
		a.partialJSON[i] = t
	}
	t.text = append(t.text, delta...)
	if len(t.text) <= eagerArgsBytes || len(t.text) >= t.parsed+t.parsed/4 {
		a.parseArgs(i)
	}
	a.emit(agent.StreamEvent{Type: agent.StreamToolCallDelta, ContentIndex: i, Delta: delta, Partial: a.snapshot()})
}

// endBlock closes a block; a tool call's arguments are parsed one last time
// from everything received.
func (a *assembler) endBlock(i int) {
	c := &a.msg.Content[i]
	ev := agent.StreamEvent{Type: blockKind(*c) + "_end", ContentIndex: i}
	switch c.Type {
	case agent.ContentText:
		ev.Content = c.Text
	case agent.ContentThinking:
		ev.Content = c.Thinking
	default:
		if t, ok := a.partialJSON[i]; ok {
			setToolArguments(c, string(t.text))
			delete(a.partialJSON, i)
		}
		call := *c
		ev.ToolCall = &call
	}
	ev.Partial = a.snapshot()
	a.emit(ev)
}

// final returns the finished message.
func (a *assembler) final() agent.Message {
	m := *a.snapshot()
	return m
}

// done ends a stream that completed: stop, length or toolUse. A tool call
// whose block never ended gets every argument received.
func (a *assembler) done() agent.Message {
	for i, t := range a.partialJSON {
		if t.parsed != len(t.text) {
			a.parseArgs(i)
		}
	}
	m := a.final()
	a.emit(agent.StreamEvent{Type: agent.StreamDone, Reason: string(m.StopReason), Message: &m})
	return m
}

// finish ends a stream that reached its provider's last event, as pi's
// Anthropic and OpenAI Responses streams both do: a stop reason pi does not
// know (unhandled, "" when none) or stopReason error ends it with an error
// message, anything else completes it.
func (a *assembler) finish(unhandled string) agent.Message {
	switch {
	case unhandled != "":
		return a.fail(agent.StopReasonError, "Unhandled stop reason: "+unhandled)
	case a.msg.StopReason == agent.StopReasonError:
		return a.fail(agent.StopReasonError, "An unknown error occurred")
	}
	return a.done()
}

// fail ends the stream with stopReason error or aborted and the given
// errorMessage. Tool calls cut short keep the arguments parsed so far.
func (a *assembler) fail(reason agent.StopReason, message string) agent.Message {
	for i, t := range a.partialJSON {
		setToolArguments(&a.msg.Content[i], string(t.text))
	}
	a.partialJSON = map[int]*toolArgs{}
	a.msg.StopReason = reason
	a.msg.ErrorMessage = message
	m := a.final()
	a.emit(agent.StreamEvent{Type: agent.StreamError, Reason: string(reason), Error: &m})
	return m
}

// aborted ends the stream the way pi ends one whose signal fired.
func (a *assembler) aborted() agent.Message {
	return a.fail(agent.StopReasonAborted, agent.AbortedErrorMessage)
}
