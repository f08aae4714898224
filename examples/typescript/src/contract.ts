// The shapes agentloop's workflows and a remote tool exchange (docs/api.md,
// "Remote tools"; Go: package agentapi). JSON field names are pi's.

export type Content =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: string; $blob: BlobRef; [k: string]: unknown };

// A stub: content over 2 KB is kept in the content store; the codec
// server's GET /blobs/{namespace}/{scope}/{sha256} returns it.
export interface BlobRef {
  sha256: string;
  size: number;
  scope: string;
}

// RemoteToolInput: the activity's one argument.
export interface RemoteToolInput {
  toolCallId: string;
  toolName: string;
  args: Record<string, unknown>;
  position: number;
  workflowId: string;
  runId: string;
  aborted?: boolean;
}

// RemoteToolResult: pi's tool result.
export interface RemoteToolResult {
  content: Content[];
  details?: unknown;
  isError?: boolean;
  terminate?: boolean;
  durationMs?: number;
}

// The toolUpdate Signal: partial results of a running call. Offsets are
// nanoseconds from the call's start (Go's time.Duration).
export interface ToolUpdate {
  toolCallId: string;
  position: number;
  attempt: number;
  results: { content: Content[]; details: unknown }[];
  offsets?: number[];
}

// The toolQueue Signal: a steering (or, with followUp, follow-up) message
// queued by a running call.
export interface ToolQueue {
  message: { role: 'user'; content: Content[]; timestamp: number };
  followUp?: boolean;
  toolCallId: string;
  position: number;
  attempt: number;
  offset?: number;
}

// An event of the run's durable log (the events Query).
export interface AgentEvent {
  seq: number;
  type: string;
  toolCallId?: string;
  toolName?: string;
  args?: Record<string, unknown>;
  result?: { content: Content[]; details?: unknown };
  partialResult?: { content: Content[]; details?: unknown };
  isError?: boolean;
  message?: { role: string; content?: Content[]; stopReason?: string; errorMessage?: string };
  reason?: string;
  [k: string]: unknown;
}

export interface EventsPage {
  events: AgentEvent[] | null;
  first: number;
  last: number;
  done: boolean;
  continuedAsNew?: boolean;
}

// A remote before hook's request (docs/api.md, Hooks): pi's hook context.
export interface BeforeHookRequest {
  hook: 'beforeToolCall';
  run: { workflowId: string; runId: string };
  toolCall: { type: 'toolCall'; id: string; name: string; arguments: Record<string, unknown> };
  args: Record<string, unknown>;
  aborted?: boolean;
}

// What a before hook answers to block the call; nothing lets it run.
export interface BeforeHookResult {
  block: boolean;
  reason?: string;
}
