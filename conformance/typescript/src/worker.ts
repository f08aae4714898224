// A conformance scenario's remote tools and remote hooks, served by a
// Temporal worker in TypeScript as a team's own worker would serve them: it
// knows only agentloop's contract (docs/api.md: the remote tool activity,
// the toolUpdate and toolQueue Signals, the hook activities), nothing of
// the loop's Go code. conformance/typescript.go starts it for a scenario
// and waits for its "polling" line; it plays the scenario's behaviours as
// pi's reference runner (reference/run.mjs) plays them in-process.
//
//   SCENARIO=path.json TASK_QUEUE=q TEMPORAL_ADDRESS=127.0.0.1:7233 node dist/worker.js
import { ApplicationFailure, Context } from '@temporalio/activity';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { readFileSync } from 'node:fs';

type Json = unknown;
type Content = { type: string; [k: string]: Json };

interface Behavior {
  updates?: Json[];
  steer?: string[];
  followUp?: string[];
  abort?: boolean;
  delayMs?: number;
  throw?: string;
  result?: Json;
  echoArgs?: boolean;
  details?: Json;
  terminate?: boolean;
}

interface Rule {
  tool?: string;
  toolCallId?: string;
  block?: boolean;
  reason?: string;
  throw?: string;
  override?: { content?: Json; details?: Json; isError?: boolean; terminate?: boolean };
}

interface Scenario {
  name: string;
  tools?: { name: string; remote?: boolean; behavior?: Behavior; byCall?: Record<string, Behavior> }[];
  hooks?: { beforeToolCall?: Rule[]; afterToolCall?: Rule[] };
}

// The shapes of docs/api.md ("Remote tools", "Hooks"); Go: package agentapi.
interface RemoteToolInput {
  toolCallId: string;
  toolName: string;
  args: Record<string, Json>;
  position: number;
  workflowId: string;
  runId: string;
}

interface ToolCall {
  id: string;
  name: string;
}

interface HookRequest {
  hook: string;
  toolCall: ToolCall;
}

const address = process.env.TEMPORAL_ADDRESS ?? 'localhost:7233';
const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
const taskQueue = process.env.TASK_QUEUE ?? 'conformance-remote';
const scenario = JSON.parse(readFileSync(process.env.SCENARIO ?? '', 'utf8')) as Scenario;

// conformance/remote.go's names, which the run's declarations use.
const toolActivity = 'ScenarioRemoteTool';
const beforeActivity = 'ScenarioBeforeHook';
const afterActivity = 'ScenarioAfterHook';

const textContent = (v: Json): Content[] => (typeof v === 'string' ? [{ type: 'text', text: v }] : (v as Content[]));

// The reference's canonical(): keys sorted, undefined dropped.
function canonical(v: Json): Json {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') {
    const out: Record<string, Json> = {};
    const o = v as Record<string, Json>;
    for (const k of Object.keys(o).sort()) if (o[k] !== undefined) out[k] = canonical(o[k]);
    return out;
  }
  return v;
}

const matches = (r: Rule, call: ToolCall): boolean =>
  (r.tool === undefined || r.tool === call.name) && (r.toolCallId === undefined || r.toolCallId === call.id);

// A hook that throws, as pi's hook throws: a failure the loop does not
// retry, whose message becomes the call's error result.
const hookThrows = (message: string): ApplicationFailure =>
  ApplicationFailure.create({ message, type: 'HookFailed', nonRetryable: true });

async function main(): Promise<void> {
  const client = new Client({ connection: await Connection.connect({ address }), namespace });

  const activities = {
    async [toolActivity](input: RemoteToolInput) {
      const def = (scenario.tools ?? []).find((t) => t.remote && t.name === input.toolName);
      if (!def) throw ApplicationFailure.nonRetryable(`no remote tool ${input.toolName} in scenario ${scenario.name}`);
      const b: Behavior = { ...(def.behavior ?? {}), ...(def.byCall?.[input.toolCallId] ?? {}) };
      const { attempt } = Context.current().info;
      const run = client.workflow.getHandle(input.workflowId, input.runId);
      const call = { toolCallId: input.toolCallId, position: input.position, attempt };
      // Partial results and queued messages at offset 0: pi's tools emit
      // them at the call's start, in one instant of its event loop, so the
      // loop orders them by that instant and call order, whatever the
      // Signals' arrival says.
      for (const u of b.updates ?? []) {
        await run.signal('toolUpdate', { ...call, results: [{ content: textContent(u), details: {} }], offsets: [0] });
      }
      const queue = async (text: string, followUp: boolean) => {
        const message = { role: 'user', content: [{ type: 'text', text }], timestamp: 0 };
        await run.signal('toolQueue', { ...call, message, followUp, offset: 0 });
      };
      for (const t of b.steer ?? []) await queue(t, false);
      for (const t of b.followUp ?? []) await queue(t, true);
      if (b.abort) throw ApplicationFailure.nonRetryable('a remote scenario tool cannot abort its run');
      const delayMs = b.delayMs ?? 0;
      if (delayMs > 0) await Context.current().sleep(delayMs);
      // durationMs: the scripted delay, the call's duration in pi's event
      // loop, by which the loop orders a parallel batch's ends.
      if (b.throw) return { content: textContent(b.throw), details: {}, isError: true, durationMs: delayMs };
      const text = b.echoArgs ? JSON.stringify(canonical(input.args)) : (b.result ?? `${def.name} ok`);
      return { content: textContent(text), details: b.details ?? {}, terminate: b.terminate === true, durationMs: delayMs };
    },

    // pi's beforeToolCall of the reference runner: the first matching rule.
    async [beforeActivity](req: HookRequest) {
      const rule = (scenario.hooks?.beforeToolCall ?? []).find((r) => matches(r, req.toolCall));
      if (!rule) return null;
      if (rule.throw) throw hookThrows(rule.throw);
      if (rule.block) return { block: true, reason: rule.reason };
      return null;
    },

    // pi's afterToolCall of the reference runner: the rule's override.
    async [afterActivity](req: HookRequest) {
      const rule = (scenario.hooks?.afterToolCall ?? []).find((r) => matches(r, req.toolCall));
      if (!rule) return null;
      if (rule.throw) throw hookThrows(rule.throw);
      const o = rule.override ?? {};
      return { ...o, content: o.content === undefined ? undefined : textContent(o.content) };
    },
  };

  const worker = await Worker.create({
    connection: await NativeConnection.connect({ address }),
    namespace,
    taskQueue,
    activities,
  });
  // The Go side starts the run once it reads this line.
  console.log(`polling ${taskQueue}`);
  await worker.run(); // until SIGTERM
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
