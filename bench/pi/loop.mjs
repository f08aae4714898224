// Times one conformance scenario through pi's own agent loop
// (@mariozechner/pi-agent-core 0.73.1, runAgentLoop, with pi-ai's faux model)
// for `go run ./bench loop`. The scenario JSON comes on stdin; the tools,
// hooks, queues and model answers are built as the shared conformance
// reference runner builds them.
//
//   node bench/pi/loop.mjs [--warmup N] < scenario.json
//
// It runs the scenario N times (the first is the cold, just-loaded run),
// then once more, timed, and prints one JSON object:
//
//   {"startupMs": ..., "coldMs": ..., "ms": ..., "cpuMs": ..., "turns": ..., "toolCalls": ..., "events": ..., "stopReason": ...}
//
// ms is the timed run, from the runAgentLoop call to the resolution of its
// promise, in-process; cpuMs is the process's CPU time in that span;
// coldMs is the first run's time; startupMs is the time from the process's
// start to the first runAgentLoop call (module loading included), which the
// benchmark reports separately and excludes.
import { performance } from "node:perf_hooks";
import { runAgentLoop } from "@mariozechner/pi-agent-core";
import { registerFauxProvider, fauxAssistantMessage } from "@mariozechner/pi-ai";

let warmup = 1;
for (let i = 2; i < process.argv.length; i++) {
  if (process.argv[i] === "--warmup") warmup = Number(process.argv[++i]);
}

const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const scenario = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const userMessage = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: 0 });

class Queue {
  constructor(mode) { this.mode = mode ?? "one-at-a-time"; this.items = []; }
  push(m) { this.items.push(m); }
  drain() {
    if (this.mode === "all") { const all = this.items; this.items = []; return all; }
    return this.items.length ? [this.items.shift()] : [];
  }
}

const sleep = (ms, signal) => new Promise((resolve, reject) => {
  if (!ms) return resolve();
  if (signal?.aborted) return reject(new Error("aborted"));
  // Unlike the reference's sleep, the abort listener goes when the timer
  // fires, so 200 turns on one signal do not pile up listeners.
  const onAbort = () => { clearTimeout(timer); reject(new Error("aborted")); };
  const timer = setTimeout(() => { signal?.removeEventListener("abort", onAbort); resolve(); }, ms);
  signal?.addEventListener("abort", onAbort, { once: true });
});

const textContent = (v) => (typeof v === "string" ? [{ type: "text", text: v }] : v);

// canonical is the reference's: objects with sorted keys (for echoArgs).
const canonical = (v) => {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === "object") {
    const out = {};
    for (const k of Object.keys(v).sort()) out[k] = canonical(v[k]);
    return out;
  }
  return v;
};

const matches = (rule, toolCall) =>
  (rule.tool === undefined || rule.tool === toolCall.name) &&
  (rule.toolCallId === undefined || rule.toolCallId === toolCall.id);

// runOnce plays the scenario once with fresh queues, abort controller and
// faux provider, and returns the in-process time of runAgentLoop.
async function runOnce() {
  const steering = new Queue(scenario.steeringMode);
  const followUps = new Queue(scenario.followUpMode);
  for (const t of scenario.queued?.steer ?? []) steering.push(userMessage(t));
  for (const t of scenario.queued?.followUp ?? []) followUps.push(userMessage(t));
  const abort = new AbortController();

  function makeTool(def) {
    const tool = {
      name: def.name,
      label: def.name,
      description: def.description ?? `test tool ${def.name}`,
      parameters: def.parameters ?? { type: "object", properties: {} },
      executionMode: def.executionMode,
      async execute(toolCallId, params, signal, onUpdate) {
        const b = { ...(def.behavior ?? {}), ...(def.byCall?.[toolCallId] ?? {}) };
        for (const u of b.updates ?? []) onUpdate?.({ content: textContent(u), details: {} });
        for (const t of b.steer ?? []) steering.push(userMessage(t));
        for (const t of b.followUp ?? []) followUps.push(userMessage(t));
        if (b.abort) abort.abort();
        await sleep(b.delayMs, signal);
        if (b.throw) throw new Error(b.throw);
        const text = b.echoArgs ? JSON.stringify(canonical(params)) : b.result ?? `${def.name} ok`;
        const result = { content: textContent(text), details: b.details ?? {} };
        if (b.terminate) result.terminate = true;
        return result;
      },
    };
    if (def.prepareArguments?.renameKeys) {
      const renames = def.prepareArguments.renameKeys;
      tool.prepareArguments = (args) => {
        if (!args || typeof args !== "object") return args;
        const out = { ...args };
        for (const [from, to] of Object.entries(renames)) {
          if (from in out && !(to in out)) { out[to] = out[from]; delete out[from]; }
        }
        return out;
      };
    }
    return tool;
  }

  const hooks = scenario.hooks ?? {};
  const beforeToolCall = hooks.beforeToolCall && (async ({ toolCall }) => {
    const rule = hooks.beforeToolCall.find((r) => matches(r, toolCall));
    if (!rule) return undefined;
    if (rule.throw) throw new Error(rule.throw);
    if (rule.block) return { block: true, reason: rule.reason };
    return undefined;
  });
  const afterToolCall = hooks.afterToolCall && (async ({ toolCall }) => {
    const rule = hooks.afterToolCall.find((r) => matches(r, toolCall));
    if (!rule) return undefined;
    if (rule.throw) throw new Error(rule.throw);
    const o = rule.override ?? {};
    return { ...o, content: o.content === undefined ? undefined : textContent(o.content) };
  });

  const faux = registerFauxProvider();
  faux.setResponses((scenario.model ?? []).map((r) => {
    const hasToolCall = (r.content ?? []).some((b) => b.type === "toolCall");
    return fauxAssistantMessage(r.content ?? [], {
      stopReason: r.stopReason ?? (hasToolCall ? "toolUse" : "stop"),
      errorMessage: r.errorMessage,
      timestamp: 0,
    });
  }));

  let stopTurns = 0;
  const stopAfter = scenario.stopAfterTurn;
  const config = {
    model: faux.getModel(),
    convertToLlm: (ms) => ms.filter((m) => ["user", "assistant", "toolResult"].includes(m.role)),
    toolExecution: scenario.toolExecution ?? "parallel",
    getSteeringMessages: async () => steering.drain(),
    getFollowUpMessages: async () => followUps.drain(),
    beforeToolCall,
    afterToolCall,
    shouldStopAfterTurn: stopAfter ? async () => ++stopTurns >= stopAfter : undefined,
  };
  const context = { systemPrompt: scenario.systemPrompt ?? "", messages: [], tools: (scenario.tools ?? []).map(makeTool) };

  // The workflow keeps every event in its log; here they go to an array.
  const events = [];
  let turns = 0, toolCalls = 0, last;
  const emit = async (event) => {
    events.push(event);
    if (event.type === "turn_end") { turns++; last = event.message; }
    if (event.type === "tool_execution_end") toolCalls++;
  };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await runAgentLoop([userMessage(scenario.prompt ?? "go")], context, config, emit, abort.signal);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  faux.unregister();
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, turns, toolCalls, events: events.length, stopReason: last?.stopReason };
}

const startupMs = performance.now();
let cold;
for (let i = 0; i < warmup; i++) {
  const r = await runOnce();
  if (i === 0) cold = r.ms;
}
const r = await runOnce();
process.stdout.write(JSON.stringify({ startupMs, coldMs: cold ?? r.ms, ...r }) + "\n");
