package agentapi

import (
	"encoding/json"

	"github.com/durable-agents/agentloop/agent"
)

// The types on the wire: what clients send to the workflows and get back
// from them, and what a run carries across continue-as-new. Inputs,
// results, Update and Signal arguments, Update answers and the carry are
// recorded in workflow history as JSON, so renaming a field or changing
// its meaning breaks the replay of recorded runs. The names these types go
// with are in names.go; the events are agent.Event.

// The workflows' inputs and results.

// AgentLoopInput is the input of one agent run: the loop configuration, the
// prior context and the prompts. Every field can be written by hand as JSON.
type AgentLoopInput struct {
	agent.LoopConfig
	// Messages is the context before this run (pi's context.messages).
	Messages []agent.Message `json:"messages,omitempty"`
	// Prompts start the run (pi's agentLoop). Prompt is a shorthand for one
	// user text prompt. With neither, the run continues from Messages
	// (pi's agentLoopContinue).
	Prompts []agent.Message `json:"prompts,omitempty"`
	Prompt  string          `json:"prompt,omitempty"`
	// Steering and FollowUps are messages queued before the run starts.
	Steering  []agent.Message `json:"steering,omitempty"`
	FollowUps []agent.Message `json:"followUps,omitempty"`
	// ContinueAsNewAfterTurns continues the run as new after this many
	// turns in one workflow run; 0 leaves it to the server's suggestion.
	ContinueAsNewAfterTurns int `json:"continueAsNewAfterTurns,omitempty"`
	// ContinueAsNewAfterEvents continues the run as new once its workflow
	// run's history has this many events, also while a tool batch waits
	// on sub-agents alone; 0 leaves it to the server's suggestion.
	ContinueAsNewAfterEvents int `json:"continueAsNewAfterEvents,omitempty"`
	// Carry is what a run hands over to its next workflow run when it
	// continues as new; people leave it out.
	Carry *Carry `json:"carry,omitempty"`
	// Parent is set by a parent run for the sub-agent run it starts.
	Parent *ParentCall `json:"parent,omitempty"`

	// decodeErr is why the input's JSON could not be decoded
	// (UnmarshalJSON, in decode.go); unknownField is a field of the JSON the
	// input does not have, refused by runs that started on a build that
	// knows it (workflows.unknownFieldsChange).
	decodeErr, unknownField string
}

// AgentLoopResult is pi's newMessages plus what a caller wants to know
// without reading them.
type AgentLoopResult struct {
	// Messages are the run's new messages in transcript order: prompts,
	// injected messages, assistant and tool-result messages.
	Messages []agent.Message `json:"messages"`
	// OmittedMessages counts leading new messages left out to keep the
	// result under the payload limit; QueryEvents still has them all.
	OmittedMessages int              `json:"omittedMessages,omitempty"`
	StopReason      agent.StopReason `json:"stopReason"`
	ErrorMessage    string           `json:"errorMessage,omitempty"`
	Turns           int              `json:"turns"`
	Usage           agent.Usage      `json:"usage"`
	// Steering and FollowUps hold messages queued too late to be injected,
	// so nothing sent to the run is lost.
	Steering  []agent.Message `json:"steering,omitempty"`
	FollowUps []agent.Message `json:"followUps,omitempty"`
}

// SessionInput starts a session: pi's Agent as a workflow. It holds the
// transcript and the settings, runs the agent loop for each prompt, and
// waits idle (at no cost) in between.
type SessionInput struct {
	agent.LoopConfig
	// Messages is the transcript to start from.
	Messages []agent.Message `json:"messages,omitempty"`
	// ContinueAsNewAfterTurns continues as new after this many turns in
	// one workflow run; 0 leaves it to the server's suggestion.
	ContinueAsNewAfterTurns int `json:"continueAsNewAfterTurns,omitempty"`
	// ContinueAsNewAfterEvents continues as new once the workflow run's
	// history has this many events (AgentLoopInput's).
	ContinueAsNewAfterEvents int `json:"continueAsNewAfterEvents,omitempty"`
	// Carry is what a session hands over to its next run when it
	// continues as new; people leave it out.
	Carry *Carry `json:"carry,omitempty"`

	// decodeErr is why the input's JSON could not be decoded
	// (UnmarshalJSON, in decode.go); unknownField is a field of the JSON the
	// input does not have, refused by runs that started on a build that
	// knows it (workflows.unknownFieldsChange).
	decodeErr, unknownField string
}

// SessionResult is what a session reports when it is cancelled.
type SessionResult struct {
	Runs     int         `json:"runs"`
	Turns    int         `json:"turns"`
	Messages int         `json:"messages"`
	Usage    agent.Usage `json:"usage"`
}

// What a run carries into its next workflow run when it continues as new.

// Carry is what a run hands over to its next run when it continues as new
// (AgentLoop and AgentSession alike), so that nothing acknowledged is lost
// and the event log goes on without a gap. It is small whatever the
// transcript's length: the transcript travels as the content store's
// segment list plus the few messages after it.
type Carry struct {
	Steering     []agent.Message `json:"steering,omitempty"`
	FollowUps    []agent.Message `json:"followUps,omitempty"`
	SteeringMode agent.QueueMode `json:"steeringMode,omitempty"`
	FollowUpMode agent.QueueMode `json:"followUpMode,omitempty"`
	Usage        agent.Usage     `json:"usage"`
	Turn         int             `json:"turn"`
	Runs         int             `json:"runs"`
	// ToolCalls counts the tool calls the budget let through.
	ToolCalls int      `json:"toolCalls,omitempty"`
	NextSeq   int64    `json:"nextSeq"`
	Allowed   []string `json:"allowed,omitempty"`
	// Segments hold the transcript's first messages, Hash is the chain
	// hash after them, and Messages are the messages that follow.
	Segments []agent.Segment `json:"segments,omitempty"`
	Hash     string          `json:"hash,omitempty"`
	Messages []agent.Message `json:"messages,omitempty"`
	// RunStart is where the current (or last) run's messages begin, and
	// RunEarlier where its messages before are (see workflows/state.go, newMessages).
	RunStart   int                  `json:"runStart"`
	RunEarlier []agent.MessageRange `json:"runEarlier,omitempty"`
	LastRole   string               `json:"lastRole,omitempty"`
	// Compaction is the latest compaction; CompactedAt the context's
	// length right after it; Compactions and TokensSaved count them all.
	Compaction  *CompactionRecord `json:"compaction,omitempty"`
	CompactedAt int               `json:"compactedAt,omitempty"`
	Compactions int               `json:"compactions,omitempty"`
	TokensSaved int               `json:"tokensSaved,omitempty"`
	// Run is a run paused between two turns, resumed first.
	Run *PausedRun `json:"run,omitempty"`
	// Next is a prompt accepted but not yet started (sessions).
	Next *NextRun `json:"next,omitempty"`
	// Settings are what a session's next run uses; a paused run goes on
	// with the configuration it started with, which the input holds.
	Settings *agent.LoopConfig `json:"settings,omitempty"`
	// LastAssistant is the run's last assistant message, which tools look
	// up names in and the run's end reports.
	LastAssistant *agent.Message `json:"lastAssistant,omitempty"`
	// HostQueue is the task queue of the host that holds the workspace:
	// the next run's workspace tools stay there.
	HostQueue string `json:"hostQueue,omitempty"`
	// StoreID is the id of the content store the run's content is in
	// (activities.ResolveRunOutput.StoreID), kept across continue-as-new.
	StoreID string `json:"storeId,omitempty"`
	// Updates are the IDs and answers of the latest Updates applied, so a
	// repeat sent across the seam is applied once (workflows/updates.go).
	Updates []UpdateRecord `json:"updates,omitempty"`
	// Dropped are the notes of dropped Signals (QueryState's dropped).
	Dropped []DroppedMessage `json:"dropped,omitempty"`
}

// CompactionRecord is what a workflow keeps of its latest compaction, for
// the next one: pi's compaction entry without its summary, which is the
// first message of the compacted context.
type CompactionRecord struct {
	// Kept is how many messages followed the summary message when the
	// compaction was made (pi's At - FirstKept).
	Kept         int                      `json:"kept"`
	TokensBefore int                      `json:"tokensBefore"`
	TokensAfter  int                      `json:"tokensAfter"`
	Details      *agent.CompactionDetails `json:"details,omitempty"`
	Timestamp    int64                    `json:"timestamp"`
}

// PausedRun is where a run stands between two turns: the messages the last
// poll took, whether the last batch asked for more, and the turns counted
// for the stop rule. A session carries it across continue-as-new.
type PausedRun struct {
	FirstTurn        bool            `json:"firstTurn,omitempty"`
	Pending          []agent.Message `json:"pending,omitempty"`
	HasMoreToolCalls bool            `json:"hasMoreToolCalls,omitempty"`
	NormalTurns      int             `json:"normalTurns,omitempty"`
	// Batch is a parallel tool batch paused while only sub-agents ran in
	// it: the run resumes it before anything else.
	Batch *PausedBatch `json:"batch,omitempty"`
	// BudgetRefused is why the budget refused a tool call of the last
	// turn: the run stops before its next model turn.
	BudgetRefused string `json:"budgetRefused,omitempty"`
}

// NextRun is a run a prompt or continue Update asked for.
type NextRun struct {
	Prompts          []agent.Message `json:"prompts,omitempty"`
	SkipSteeringPoll bool            `json:"skipSteeringPoll,omitempty"`
}

// UpdateRecord is an applied Update: its ID and its answer's JSON.
type UpdateRecord struct {
	ID     string          `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
}

// The arguments and answers of the Updates (and their Signal twins).

// QueueStatus answers a steer or followUp Update: how many messages wait in
// that queue now, this one included.
type QueueStatus struct {
	Queued int `json:"queued"`
}

// AbortStatus answers an abort Update.
type AbortStatus struct {
	// AlreadyAborted is set when an earlier abort got there first.
	AlreadyAborted bool `json:"alreadyAborted,omitempty"`
}

// ApproveRequest answers a pending approval: allow, deny (with a reason the
// model sees) or always (allow, and allow this tool for the rest of the
// session).
type ApproveRequest struct {
	ToolCallID string `json:"toolCallId"`
	// Position is the call's position in its message, from 1: needed only
	// when calls of one message that wait share ToolCallID (the approval
	// events and pending list then carry it), ignored otherwise.
	Position int    `json:"position,omitempty"`
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
	// WorkflowID names the sub-agent whose call this answers, when a
	// sub-agent's call waits on the parent's watchers
	// (PendingApproval.SubAgent); needed only when the id alone is
	// ambiguous.
	WorkflowID string `json:"workflowId,omitempty"`

	unknown string // a field the JSON had and this type lacks (fields.go)
}

// ApprovalStatus answers an approve Update: how many calls still wait.
type ApprovalStatus struct {
	Pending int `json:"pending"`
}

// PromptRequest starts a run: Text becomes one user message with Images
// after it, as pi's Agent.prompt(text, images) does; Messages are sent as
// they are.
type PromptRequest struct {
	Text     string          `json:"text,omitempty"`
	Images   []agent.Content `json:"images,omitempty"`
	Messages []agent.Message `json:"messages,omitempty"`

	unknown string // a field the JSON had and this type lacks (fields.go)
}

// RunStatus answers prompt and continue: the run's number in the session,
// and the sequence number of the last event before it, to follow from.
type RunStatus struct {
	Run   int   `json:"run"`
	After int64 `json:"after"`
}

// CompactRequest is the compact Update's argument: custom instructions for
// the summary (pi's /compact [instructions]).
type CompactRequest struct {
	Instructions string `json:"instructions,omitempty"`

	unknown string // a field the JSON had and this type lacks (fields.go)
}

// CompactStatus answers the compact Update.
type CompactStatus struct {
	TokensBefore int `json:"tokensBefore"`
	TokensAfter  int `json:"tokensAfter"`
}

// SettingRequest is the argument of the setters: Model for setModel,
// Level for setThinkingLevel, Mode for the mode setters.
type SettingRequest struct {
	Model *agent.ModelRef `json:"model,omitempty"`
	Level string          `json:"level,omitempty"`
	Mode  string          `json:"mode,omitempty"`

	unknown string // a field the JSON had and this type lacks (fields.go)
}

// SetBudgetStatus answers the setBudget Update.
type SetBudgetStatus = BudgetState

// AbortRequest is the argument of the abort Update and Signal.
type AbortRequest struct {
	Reason string `json:"reason,omitempty"`
}

// The answers of the Queries and their arguments.

// RunState answers QueryState.
type RunState struct {
	Status           string            `json:"status"`
	Turn             int               `json:"turn"`
	PendingToolCalls []string          `json:"pendingToolCalls"`
	Steering         []agent.Message   `json:"steering"`
	FollowUps        []agent.Message   `json:"followUps"`
	Aborted          bool              `json:"aborted,omitempty"`
	AbortReason      string            `json:"abortReason,omitempty"`
	Messages         int               `json:"messages"`
	LastEvent        int64             `json:"lastEvent"`
	StopReason       agent.StopReason  `json:"stopReason,omitempty"`
	Usage            agent.Usage       `json:"usage"`
	PendingApprovals []PendingApproval `json:"pendingApprovals"`
	// AllowedTools are tools a person allowed for the rest of the session.
	AllowedTools []string `json:"allowedTools,omitempty"`
	// Model and the settings below are those the next run uses.
	Model         agent.ModelRef      `json:"model"`
	ThinkingLevel string              `json:"thinkingLevel"`
	ToolExecution agent.ExecutionMode `json:"toolExecution"`
	SteeringMode  agent.QueueMode     `json:"steeringMode"`
	FollowUpMode  agent.QueueMode     `json:"followUpMode"`
	// ContextTokens estimates the context the next model turn sends;
	// ContextWindow is the model's window (0 when unknown). Compactions
	// and TokensSaved count the context's compactions and what they saved.
	ContextTokens int `json:"contextTokens"`
	ContextWindow int `json:"contextWindow,omitempty"`
	Compactions   int `json:"compactions,omitempty"`
	TokensSaved   int `json:"tokensSaved,omitempty"`
	// Budget is the limits, the spend and what is left (workflows/budget.go).
	Budget BudgetState `json:"budget"`
	// Dropped notes the latest Signals the run could not take (a Signal
	// cannot be refused): an invalid message, or queues without room.
	Dropped []DroppedMessage `json:"dropped,omitempty"`
}

// DroppedMessage is a note of a steer, followUp or prompt Signal that the
// run dropped: its channel, the bytes of its content's text, why, and when
// (Unix ms).
type DroppedMessage struct {
	Signal string `json:"signal"`
	Bytes  int    `json:"bytes"`
	Reason string `json:"reason"`
	At     int64  `json:"at"`
}

// PendingApproval is a tool call waiting for a person, as QueryState shows it.
type PendingApproval struct {
	ToolCallID string         `json:"toolCallId"`
	ToolName   string         `json:"toolName"`
	Args       map[string]any `json:"args"`
	Reason     string         `json:"reason"`
	// Deadline is when silence blocks the call, Unix ms; 0 for never.
	Deadline int64 `json:"deadline,omitempty"`
	// Position is the call's position in its message, from 1, set only
	// when another call of the message has the same ToolCallID: an approval
	// of such a call while both wait must name it.
	Position int `json:"position,omitempty"`
	// SubAgent names the sub-agent whose call this is, when it is not the
	// run's own; approve it with its WorkflowID.
	SubAgent *agent.SubAgentRef `json:"subAgent,omitempty"`
}

// BudgetState is the budget part of QueryState: the limits (nil: none),
// what was spent, what is left of each limit, and the limit reached, if
// any (a session refuses prompts until it is raised).
type BudgetState struct {
	Limits    *agent.Budget   `json:"limits,omitempty"`
	Spent     agent.Spend     `json:"spent"`
	Remaining agent.Remaining `json:"remaining"`
	Exhausted string          `json:"exhausted,omitempty"`
}

// EventsQuery asks for events from sequence number After+1 on; Limit caps
// the count (0 means as many as fit in a page).
type EventsQuery struct {
	After int64 `json:"after"`
	Limit int   `json:"limit,omitempty"`
}

// EventsPage is one answer of QueryEvents. First and Last are the sequence
// numbers of the oldest and newest events this workflow run holds (a
// session's earlier events are in the runs before a continue-as-new); Done
// is set once the run has ended, so a reader that has seen Last can stop.
// ContinuedAsNew says the events go on in the next run of the same workflow
// id, numbered from Last+1.
type EventsPage struct {
	Events         []agent.Event `json:"events"`
	First          int64         `json:"first"`
	Last           int64         `json:"last"`
	Done           bool          `json:"done"`
	ContinuedAsNew bool          `json:"continuedAsNew,omitempty"`
	// PreviousRunID is the run this one continued, which holds the events
	// before First.
	PreviousRunID string `json:"previousRunId,omitempty"`
}

// LogExcerpt is what a client decodes from the input of a ModelTurn
// activity (ActivityTaskScheduled in the run's history), and from the
// MemoLogExcerpt field of a memo upsert (WorkflowPropertiesModified) where
// the run rests: while someone watches the run, the event log's events
// since the log was last carried, numbered as QueryEvents numbers them.
// Empty when nobody watched the turn before or the events were too large
// to copy; a reader then asks QueryEvents.
type LogExcerpt struct {
	Events []agent.Event `json:"events,omitempty"`
}

// ContextQuery asks for messages [From, To) of the run's context.
type ContextQuery struct {
	From int `json:"from"`
	To   int `json:"to"`
}

// ContextPage is one page of a context as the workflow holds it. Messages
// before Offset are not held by the run: Segments (in the content store)
// hold them. A page stops early at a size limit; Next is where the
// following page starts.
type ContextPage struct {
	SystemPrompt string          `json:"systemPrompt"`
	Segments     []agent.Segment `json:"segments,omitempty"`
	Offset       int             `json:"offset"`
	Messages     []agent.Message `json:"messages"`
	Next         int             `json:"next"`
	Total        int             `json:"total"`
}
