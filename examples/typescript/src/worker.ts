// A Temporal worker of one's own, in TypeScript, serving a remote tool of
// agentloop and a remote before hook: the activities NotesSearch and
// CheckCall on task queue `notes-tools` (or $TOOL_TASK_QUEUE). A run
// declares them in its remoteTools and beforeToolCall (client.ts); the loop
// validates the arguments, asks for approval and runs the hooks, and
// schedules NotesSearch only to execute the call.
//
//   node dist/worker.js      (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TOOL_TASK_QUEUE)
import { Context, heartbeat } from '@temporalio/activity';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { BeforeHookRequest, BeforeHookResult, Content, RemoteToolInput, RemoteToolResult, ToolQueue, ToolUpdate } from './contract';

const address = process.env.TEMPORAL_ADDRESS ?? 'localhost:7233';
const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
const taskQueue = process.env.TOOL_TASK_QUEUE ?? 'notes-tools';

const text = (t: string): Content => ({ type: 'text', text: t });

// Nanoseconds since start: the offsets of partial results and queued
// messages are Go durations.
const since = (start: bigint): number => Number(process.hrtime.bigint() - start);

async function main(): Promise<void> {
  // The activity talks to its run with a client of its own: partial
  // results (toolUpdate) and steering messages (toolQueue) are Signals to
  // the workflow named in its input.
  const client = new Client({ connection: await Connection.connect({ address }), namespace });

  const activities = {
    // A before hook (beforeToolCall: [{activity: ...}]): it sees every call
    // of the run, built-in tools included, after validation and before
    // approval; answering nothing lets the call run.
    async CheckCall(req: BeforeHookRequest): Promise<BeforeHookResult | undefined> {
      const path = String(req.args.path ?? '');
      if (req.toolCall.name === 'ls' && (path.startsWith('/') || path.split('/').includes('..'))) {
        return { block: true, reason: `notes hook: ${path} is outside the notes` };
      }
      return undefined;
    },

    // The activity type the run declares (remoteTools[].activityType).
    async NotesSearch(input: RemoteToolInput): Promise<RemoteToolResult> {
      const start = process.hrtime.bigint();
      const { attempt } = Context.current().info;
      const query = String(input.args.query);
      const limit = Number(input.args.limit ?? 10); // a number: the loop coerced "40"
      const run = client.workflow.getHandle(input.workflowId, input.runId);
      heartbeat();

      // A partial result: a tool_execution_update event, in pi's order.
      const update: ToolUpdate = {
        toolCallId: input.toolCallId, position: input.position, attempt,
        results: [{ content: [text(`searching ${limit} notes for "${query}"`)], details: {} }],
        offsets: [since(start)],
      };
      await run.signal('toolUpdate', update);

      // A steering message queued from inside the tool: the run injects it
      // after this turn, before the next model call, as pi's agent.steer().
      const steer: ToolQueue = {
        message: { role: 'user', content: [text('Steering from the notes tool: answer in one line.')], timestamp: Date.now() },
        toolCallId: input.toolCallId, position: input.position, attempt, offset: since(start),
      };
      await run.signal('toolQueue', steer);

      // More than 2 KB of output: the run keeps it in its content store and
      // its events hold a stub, which client.ts reads over HTTP.
      const lines: string[] = [];
      for (let i = 1; i <= limit; i++) {
        lines.push(`note ${String(i).padStart(3, '0')}: ${query} appears in a note about durable execution and retries`);
      }
      heartbeat();
      return { content: [text(lines.join('\n'))], details: { matches: limit, query } };
    },
  };

  const worker = await Worker.create({
    connection: await NativeConnection.connect({ address }),
    namespace,
    taskQueue,
    activities,
  });
  console.log(`notes tool worker polls ${taskQueue}`);
  // Runs until SIGINT or SIGTERM.
  await worker.run();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
