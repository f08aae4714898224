// A client of agentloop in TypeScript: starts a session whose run may call
// the remote tool of worker.ts, prompts it, follows its events live,
// approves the tool's call, and prints the tool's full output, which the
// events hold as a stub, read from the codec server's GET /blobs.
//
//   node dist/client.js "find my notes about temporal"
//
// TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, AGENT_TASK_QUEUE (agent-loop),
// TOOL_TASK_QUEUE (notes-tools), MODEL (provider/id), CODEC_URL
// (http://127.0.0.1:8081), AGENTLOOP_CODEC_TOKEN, SESSION_ID.
import { Client, Connection, WorkflowHandle } from '@temporalio/client';
import type { AgentEvent, BlobRef, Content, EventsPage } from './contract';

const address = process.env.TEMPORAL_ADDRESS ?? 'localhost:7233';
const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
const agentQueue = process.env.AGENT_TASK_QUEUE ?? 'agent-loop';
const toolQueue = process.env.TOOL_TASK_QUEUE ?? 'notes-tools';
const [provider, ...modelId] = (process.env.MODEL ?? 'openai/gpt-4.1-mini').split('/');
const codecUrl = process.env.CODEC_URL ?? 'http://127.0.0.1:8081';
const token = process.env.AGENTLOOP_CODEC_TOKEN ?? '';
const prompt = process.argv[2] ?? 'Find my notes about temporal.';

// The stored content behind a stub: the codec server answers with the
// JSON value the stub stands for (here a whole content block).
async function readBlob(ref: BlobRef): Promise<Content> {
  const url = `${codecUrl}/blobs/${encodeURIComponent(namespace)}/${encodeURIComponent(ref.scope)}/${ref.sha256}`;
  const resp = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
  if (resp.status !== 200) {
    throw new Error(`GET ${url}: ${resp.status} ${await resp.text()}`);
  }
  return (await resp.json()) as Content;
}

async function resolve(blocks: Content[] = []): Promise<Content[]> {
  return Promise.all(blocks.map((b) => ('$blob' in b ? readBlob(b.$blob as BlobRef) : b)));
}

const textOf = (blocks: Content[] = []): string =>
  blocks.map((b) => ('text' in b && typeof b.text === 'string' ? b.text : '$blob' in b ? '[stored]' : `[${b.type}]`)).join(' ');

const oneLine = (s: string, n = 100): string => {
  const l = s.replace(/\s+/g, ' ').trim();
  return l.length > n ? l.slice(0, n - 1) + '…' : l;
};

// follow reads the session's event log from after, live, until the run
// that the prompt started ends, calling on for each event.
async function follow(handle: WorkflowHandle, after: number, on: (e: AgentEvent) => Promise<void>): Promise<void> {
  for (;;) {
    const page = (await handle.query('events', { after })) as EventsPage;
    const events = page.events ?? []; // null when nothing is new
    for (const e of events) {
      after = e.seq;
      await on(e);
      if (e.type === 'agent_end') return;
    }
    if (events.length === 0) await new Promise((r) => setTimeout(r, 100));
  }
}

async function main(): Promise<void> {
  const client = new Client({ connection: await Connection.connect({ address }), namespace });
  const sessionId = process.env.SESSION_ID ?? `notes-session-${Date.now()}`;
  const handle = await client.workflow.start('AgentSession', {
    taskQueue: agentQueue,
    workflowId: sessionId,
    args: [{
      model: { provider, id: modelId.join('/') },
      systemPrompt: 'You search the user\'s notes.',
      tools: ['ls'],
      remoteTools: [{
        name: 'notes_search',
        description: 'Search the user\'s notes; returns one line per matching note.',
        parameters: {
          type: 'object',
          properties: { query: { type: 'string' }, limit: { type: 'number' } },
          required: ['query'],
        },
        taskQueue: toolQueue,
        activityType: 'NotesSearch',
        startToCloseTimeout: '1m',
        heartbeatTimeout: '30s',
        replay: 'safe',
      }],
      // The worker of worker.ts checks every call first (a remote before
      // hook), then a person approves every call of the remote tool.
      beforeToolCall: [{ activity: { taskQueue: toolQueue, activityType: 'CheckCall', timeout: '10s' } }],
      approval: { tools: ['notes_search'] },
    }],
  });
  console.log(`session ${sessionId} started`);

  const { after } = (await handle.executeUpdate('prompt', { args: [{ text: prompt }] })) as { after: number };
  await follow(handle, after, async (e) => {
    switch (e.type) {
      case 'message_end':
        if (e.message?.role === 'user') console.log(`user: ${textOf(e.message.content)}`);
        if (e.message?.role === 'assistant') {
          const said = (e.message.content ?? []).filter((b) => b.type === 'text');
          if (said.length > 0) console.log(`assistant: ${textOf(said)}`);
        }
        break;
      case 'tool_execution_start':
        console.log(`tool start ${e.toolName} ${e.toolCallId} ${JSON.stringify(e.args)}`);
        break;
      case 'approval_request':
        console.log(`approval requested for ${e.toolName} ${e.toolCallId}: approving`);
        await handle.executeUpdate('approve', { args: [{ toolCallId: e.toolCallId, decision: 'allow' }] });
        break;
      case 'tool_execution_update':
        console.log(`tool update ${e.toolName} ${e.toolCallId}: ${textOf(e.partialResult?.content)}`);
        break;
      case 'tool_execution_end': {
        const stubs = (e.result?.content ?? []).filter((b) => '$blob' in b).length;
        const full = textOf(await resolve(e.result?.content));
        console.log(`tool end ${e.toolName} ${e.toolCallId}${e.isError ? ' (error)' : ''}: ${oneLine(full)}`);
        if (stubs > 0) {
          console.log(`full output of ${e.toolCallId} (${full.length} characters, read from the codec server):`);
          console.log(full);
        }
        break;
      }
      case 'agent_end':
        console.log('run ended');
        break;
    }
  });
  await handle.cancel();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
