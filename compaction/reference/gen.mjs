// Generates transcripts deterministically, runs pi-coding-agent 0.73.1's own
// compaction on each (estimateTokens, estimateContextTokens, shouldCompact,
// findCutPoint, prepareCompaction, compact() with a faux summarizer that
// records the requests it is sent, buildSessionContext + convertToLlm) and
// writes the inputs and pi's outputs as JSON. The Go test reads that file and
// needs no Node.
//
//   cd compaction && npm ci --prefix reference && node reference/gen.mjs testdata/golden.json.gz
//   (or: go generate ./compaction)
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { registerFauxProvider } from "@mariozechner/pi-ai";

// prepareCompaction, estimateContextTokens, the file-op helpers and the
// session manager are not in the package's "exports", so they are imported
// by file, as pi's own modules import them.
const core = new URL("./node_modules/@mariozechner/pi-coding-agent/dist/core/", import.meta.url);
const pi = await import(new URL("compaction/index.js", core));
const { convertToLlm } = await import(new URL("messages.js", core));
const { SessionManager } = await import(new URL("session-manager.js", core));

// generateSummary stamps its request message with Date.now(); the Go side is
// given this clock as RequestOptions.Timestamp.
const NOW = 1767225600000;
Date.now = () => NOW;

const CASES = 150;

// mulberry32: a small seeded PRNG, so every run writes the same file.
function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1));
  return { next, int, chance: (p) => next() < p, pick: (xs) => xs[Math.floor(next() * xs.length)] };
}

const WORDS = [
  "the", "function", "parse", "config", "error", "test", "file", "value", "return", "index", "build", "server",
  "retry", "cache", "naïve", "café", "漢字", "😀", "🚀🔥", "𝔘𝔫𝔦", "Ω", '"quoted"', "back\\slash", "tab\there",
  "<tag>", "a&b", "line\u2028sep", "ctrl\u0001x", "new\nline", "$HOME", "`tick`",
];
const PATHS = [
  "src/main.go", "README.md", "pkg/ünïcode.txt", "docs/😀.md", "ｆｕｌｌ.txt", "a/b/c.ts", "/abs/path.py",
  "Z.txt", "a.txt", "test/x_test.go", "deep/nested/dir/file.rs", "space name.txt", "😀.txt", "ｆｏｏ.txt",
];

const sentence = (r, n) => Array.from({ length: n }, () => r.pick(WORDS)).join(" ");

function longOutput(r, chars) {
  if (r.chance(0.2)) {
    // Emoji around the 2000-character cut: truncateForSummary counts UTF-16
    // units, so the cut may fall inside a surrogate pair.
    return "x".repeat(r.int(0, 3)) + "😀".repeat(Math.ceil(chars / 2));
  }
  const lines = [];
  let n = 0;
  for (let i = 1; n < chars; i++) {
    const line = `${i}: ${sentence(r, r.int(3, 12))}`;
    lines.push(line);
    n += line.length + 1;
  }
  return lines.join("\n");
}

// Objects are built with their keys in sorted order: Go holds tool-call
// arguments in a map, so the transcript Go sees has no other order, and pi
// must be run on that transcript. (JS still puts integer-like keys first.)
function sortedObject(obj) {
  const out = {};
  for (const k of Object.keys(obj).sort()) out[k] = obj[k];
  return out;
}

function toolArgs(r, name) {
  const path = r.chance(0.08) ? r.pick([42, "", null]) : r.pick(PATHS);
  const withPath = (o) => (r.chance(0.05) ? o : { ...o, path });
  switch (name) {
    case "read":
      return withPath(r.chance(0.3) ? { offset: r.int(1, 500), limit: r.int(1, 2000) } : {});
    case "write":
      return withPath({ content: sentence(r, r.int(2, 12)) });
    case "edit":
      return withPath({ edits: [{ newText: sentence(r, 3), oldText: sentence(r, 3) }] });
    case "bash":
      return r.chance(0.3) ? { command: sentence(r, r.int(1, 6)), timeout: r.int(1, 600) } : { command: "go test ./..." };
    case "grep":
      return { glob: "*.go", ignoreCase: r.chance(0.5), path: r.pick(PATHS), pattern: sentence(r, 1) };
    default:
      return sortedObject({
        0: "zero", 10: "ten", 2: [1, 2.5, -3, true, null, "s"],
        big: 1e21, small: 1e-7, frac: r.next(), nested: sortedObject({ z: { y: [] }, a: "\u2028\"\\<&>" }),
        empty: {}, text: sentence(r, 4),
      });
  }
}

const TOOLS = ["read", "read", "write", "edit", "edit", "bash", "bash", "grep", "ls", "find", "custom"];

function usage(r) {
  const input = r.int(0, 90000), output = r.int(0, 4000), cacheRead = r.int(0, 60000), cacheWrite = r.int(0, 9000);
  // totalTokens 0: calculateContextTokens adds the parts instead.
  const totalTokens = r.chance(0.15) ? 0 : input + output + cacheRead + cacheWrite;
  return { input, output, cacheRead, cacheWrite, totalTokens, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
}

class Transcript {
  constructor(r, startTime) {
    this.r = r;
    this.t = startTime;
    this.calls = 0;
    this.messages = [];
  }
  ts() { return (this.t += 1000); }
  user() {
    const r = this.r;
    let content;
    if (r.chance(0.1)) content = sentence(r, r.int(0, 30)); // pi allows a plain string
    else {
      content = [{ type: "text", text: r.chance(0.05) ? "" : sentence(r, r.int(1, r.chance(0.05) ? 200 : 20)) }];
      if (r.chance(0.15)) content.push({ type: "image", data: "aGVsbG8=", mimeType: "image/png" });
      if (r.chance(0.15)) content.push({ type: "text", text: sentence(r, r.int(1, 20)) });
    }
    this.messages.push({ role: "user", content, timestamp: this.ts() });
  }
  assistant({ calls = 0, stopReason } = {}) {
    const r = this.r;
    const content = [];
    if (r.chance(0.4)) {
      const redacted = r.chance(0.1);
      content.push(redacted
        ? { type: "thinking", thinking: "", thinkingSignature: "sig", redacted: true }
        : { type: "thinking", thinking: sentence(r, r.int(1, 40)), thinkingSignature: "sig" });
      if (r.chance(0.15)) content.push({ type: "thinking", thinking: sentence(r, r.int(1, 10)) });
    }
    if (r.chance(0.8)) content.push({ type: "text", text: sentence(r, r.int(0, 30)) });
    if (r.chance(0.1)) content.push({ type: "text", text: sentence(r, r.int(1, 10)) });
    const ids = [];
    for (let i = 0; i < calls; i++) {
      const name = r.pick(TOOLS);
      const id = `call_${++this.calls}`;
      ids.push({ id, name });
      content.push({ type: "toolCall", id, name, arguments: sortedObject(toolArgs(r, name)) });
    }
    const msg = {
      role: "assistant", content, api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5",
      usage: usage(r), stopReason: stopReason ?? (calls ? "toolUse" : r.chance(0.1) ? "length" : "stop"),
      timestamp: this.ts(),
    };
    if (msg.stopReason === "error") msg.errorMessage = r.pick(["429 rate limited", "prompt is too long: 213000 tokens > 200000 maximum", "socket hang up"]);
    this.messages.push(msg);
    return ids;
  }
  results(calls) {
    const r = this.r;
    for (const { id, name } of calls) {
      let content = [];
      if (r.chance(0.07)) content.push({ type: "text", text: longOutput(r, r.int(1990, 2600)) });
      else if (!r.chance(0.05)) content.push({ type: "text", text: sentence(r, r.int(1, 25)) });
      if (r.chance(0.08)) content.push({ type: "image", data: "aGVsbG8=", mimeType: "image/png" });
      if (r.chance(0.08)) content.push({ type: "text", text: sentence(r, r.int(1, 10)) });
      this.messages.push({
        role: "toolResult", toolCallId: id, toolName: name, content, details: {}, isError: r.chance(0.1),
        timestamp: this.ts(),
      });
    }
  }
  // turn: a prompt and the model's steps until it stops, as pi's loop writes them.
  turn(steps) {
    this.user();
    if (this.steps(steps)) this.assistant();
  }
  // steps: tool-calling steps; false when the run ended with an error or abort.
  steps(n) {
    const r = this.r;
    for (let s = 0; s < n; s++) {
      if (r.chance(0.05)) { this.assistant({ stopReason: r.pick(["error", "aborted"]) }); return false; }
      const calls = this.assistant({ calls: r.int(1, r.chance(0.3) ? 4 : 2) });
      this.results(calls);
      if (r.chance(0.07)) this.user(); // a steering message between two steps
    }
    return true;
  }
}

// ---------------------------------------------------------------------------
// The faux summarizer: records what compact() sends and answers with a
// deterministic summary (thinking and several text blocks, as a model might).

const faux = registerFauxProvider({
  models: [{ id: "summarizer", reasoning: false }, { id: "summarizer-reasoning", reasoning: true }],
});
const PREFIX_END = "Be concise. Focus on what's needed to understand the kept suffix.";

function answers(r, tag) {
  const mk = (kind) => {
    const content = [];
    if (r.chance(0.3)) content.push({ type: "thinking", thinking: "let me think" });
    content.push({ type: "text", text: `## Goal\n${kind} ${tag}: ${sentence(r, r.int(3, 20))}` });
    if (r.chance(0.4)) content.push({ type: "text", text: `## Next Steps\n1. ${sentence(r, 5)}` });
    return { role: "assistant", content, stopReason: "stop" };
  };
  return { history: mk("history"), turnPrefix: mk("prefix") };
}

async function runCompact(preparation, opts) {
  const requests = [];
  const step = (context, options) => {
    const text = context.messages[0].content[0].text;
    const kind = text.endsWith(PREFIX_END) ? "turnPrefix" : "history";
    requests.push({
      kind, systemPrompt: context.systemPrompt, messages: context.messages,
      maxTokens: options?.maxTokens, reasoning: options?.reasoning,
    });
    const a = opts.answers[kind];
    return { ...a, api: "faux", provider: "faux", model: "summarizer", usage: usage(rng(1)), timestamp: NOW };
  };
  faux.setResponses([step, step]);
  const model = faux.getModel(opts.reasoningModel ? "summarizer-reasoning" : "summarizer");
  try {
    const result = await pi.compact(preparation, model, "key", undefined, opts.customInstructions, undefined, opts.thinkingLevel);
    return { requests: order(requests), result };
  } catch (e) {
    return { requests: order(requests), error: e.message };
  }
}
const order = (requests) => requests.sort((a, b) => (a.kind === b.kind ? 0 : a.kind === "history" ? -1 : 1));

// ---------------------------------------------------------------------------

const iso = (ms) => new Date(ms).toISOString();
const tokensOf = (messages) => messages.reduce((n, m) => n + pi.estimateTokens(m), 0);

function settingsFor(r, messages) {
  const total = tokensOf(messages);
  let keepRecentTokens;
  if (r.chance(0.1)) keepRecentTokens = 20000;
  else if (r.chance(0.04)) keepRecentTokens = 0;
  else keepRecentTokens = Math.max(1, Math.floor(total * (0.02 + r.next() * 1.05)));
  const reserveTokens = r.chance(0.3) ? 16384 : r.int(0, 50000);
  return { enabled: !r.chance(0.08), reserveTokens, keepRecentTokens };
}

// previousCompaction runs pi's own compaction over the session so far and
// appends its entry, as AgentSession.compact() does.
async function previousCompaction(r, sm, messages, t, mode, keepRecentTokens) {
  const settings = settingsFor(r, messages);
  if (keepRecentTokens !== undefined) settings.keepRecentTokens = keepRecentTokens;
  const prep = pi.prepareCompaction(sm.getBranch(), settings);
  if (!prep) return;
  const { result } = await runCompact(prep, { answers: answers(r, "earlier"), thinkingLevel: undefined });
  if (!result) return;
  const fromHook = mode === "fromHook";
  const details = mode === "noDetails" ? undefined : result.details;
  const id = sm.appendCompaction(result.summary, result.firstKeptEntryId, result.tokensBefore, details, fromHook);
  sm.getEntries().find((e) => e.id === id).timestamp = iso(t);
}

function goCompaction(entries, messages) {
  let idx = -1;
  for (let i = entries.length - 1; i >= 0; i--) if (entries[i].type === "compaction") { idx = i; break; }
  if (idx < 0) return null;
  const c = entries[idx];
  const firstKept = entries.find((e) => e.id === c.firstKeptEntryId);
  return {
    summary: c.summary,
    firstKept: messages.indexOf(firstKept.message),
    at: entries.slice(0, idx).filter((e) => e.type === "message").length,
    tokensBefore: c.tokensBefore,
    details: !c.fromHook && c.details ? c.details : null,
    timestamp: new Date(c.timestamp).getTime(),
  };
}

// contextIndexes names each message of a context by its index in messages;
// -1 is the compaction summary, which is written out beside.
function contextOf(sm, messages) {
  const agentMessages = sm.buildSessionContext().messages;
  const llm = convertToLlm(agentMessages);
  const summary = llm.find((m) => !messages.includes(m));
  return {
    indexes: llm.map((m) => messages.indexOf(m)),
    summaryMessage: summary ?? null,
    usage: pi.estimateContextTokens(agentMessages),
  };
}

const entryToMessage = (entries, messages, i) => (i < entries.length && entries[i].type === "message" ? messages.indexOf(entries[i].message) : i === entries.length ? messages.length : null);

async function genCase(n) {
  const r = rng(7919 * (n + 1));
  const kinds = ["plain", "previous", "twoPrevious", "alreadyCompacted", "noDetails", "fromHook", "longTurn", "tiny", "empty", "summarizerError", "continuedTurn"];
  // Every kind three times, then mostly the ones with the most to cut.
  const kind = n < kinds.length * 3 ? kinds[n % kinds.length] : r.pick(["plain", "plain", "previous", "twoPrevious", "noDetails", "longTurn", "longTurn", "summarizerError", "continuedTurn"]);
  const sm = SessionManager.inMemory("/work");
  const tr = new Transcript(r, 1760000000000 + n * 10000000);
  const add = (from) => { for (const m of tr.messages.slice(from)) sm.appendMessage(m); };
  let keepRecentTokens;

  const turns = (count) => {
    const from = tr.messages.length;
    for (let i = 0; i < count; i++) tr.turn(r.int(0, r.chance(0.1) ? 6 : 2));
    add(from);
  };
  switch (kind) {
    case "empty":
      break;
    case "tiny":
      turns(1);
      break;
    case "longTurn": {
      turns(r.int(0, 3));
      const from = tr.messages.length;
      tr.turn(r.int(5, 10));
      add(from);
      break;
    }
    case "previous": case "noDetails": case "fromHook": case "alreadyCompacted": case "twoPrevious":
      turns(r.int(2, 7));
      await previousCompaction(r, sm, tr.messages, tr.ts(), kind);
      if (kind === "twoPrevious") {
        turns(r.int(1, 6));
        await previousCompaction(r, sm, tr.messages, tr.ts(), kind);
      }
      if (kind !== "alreadyCompacted") turns(r.int(1, 6));
      break;
    case "continuedTurn": {
      // A compaction inside a run (pi's overflow recovery continues the run
      // after it) that keeps the run's prompt, then more steps of that run:
      // the next cut splits the turn that starts at the first kept message.
      turns(r.int(1, 4));
      const from = tr.messages.length;
      tr.user();
      tr.steps(r.int(1, 3));
      add(from);
      await previousCompaction(r, sm, tr.messages, tr.ts(), kind, tokensOf(tr.messages.slice(from)));
      const more = tr.messages.length;
      if (tr.steps(r.int(3, 8))) tr.assistant();
      add(more);
      keepRecentTokens = Math.max(1, Math.floor(tokensOf(tr.messages.slice(more)) * r.next()));
      break;
    }
    default:
      turns(r.int(1, 10));
  }
  const messages = tr.messages;
  const entries = sm.getBranch();
  const settings = settingsFor(r, messages);
  if (keepRecentTokens !== undefined) settings.keepRecentTokens = keepRecentTokens;
  const ctx = contextOf(sm, messages);

  // shouldCompact around its boundary and at the session's own tokens.
  const window = Math.max(0, ctx.usage.tokens + settings.reserveTokens + r.int(-3000, 3000));
  const shouldCompact = [
    [ctx.usage.tokens, window],
    [window - settings.reserveTokens, window],
    [window - settings.reserveTokens + 1, window],
  ].map(([tokens, contextWindow]) => ({ tokens, contextWindow, result: pi.shouldCompact(tokens, contextWindow, settings) }));

  // findCutPoint on the bare messages, over random ranges.
  const plain = messages.map((message, i) => ({ type: "message", id: `m${i}`, parentId: i ? `m${i - 1}` : null, timestamp: iso(0), message }));
  const cuts = [];
  for (let i = 0; i < 4 && messages.length; i++) {
    const start = r.int(0, messages.length - 1), end = r.int(start, messages.length);
    const keep = r.chance(0.2) ? 0 : r.int(1, Math.max(1, tokensOf(messages.slice(start, end))));
    cuts.push({ start, end, keepRecentTokens: keep, ...pi.findCutPoint(plain, start, end, keep) });
  }

  const options = {
    customInstructions: r.chance(0.3) ? r.pick(["Focus on the failing tests.", sentence(r, 8), "Keep file paths\nand \"quotes\"."]) : undefined,
    thinkingLevel: r.pick([undefined, "off", "low", "medium", "high"]),
    reasoningModel: r.chance(0.5),
    answers: answers(r, `case ${n}`),
  };
  if (kind === "summarizerError") {
    const k = r.pick(["history", "turnPrefix"]);
    options.answers[k] = { role: "assistant", content: [], stopReason: "error", errorMessage: r.chance(0.8) ? "overloaded_error: Overloaded" : undefined };
  }

  let preparation = null, compaction = null, after = null;
  const prep = pi.prepareCompaction(entries, settings);
  if (prep) {
    const index = (m) => messages.indexOf(m);
    let prevIdx = -1;
    for (let i = entries.length - 1; i >= 0; i--) if (entries[i].type === "compaction") { prevIdx = i; break; }
    const boundaryStart = prevIdx < 0 ? 0 : entries.findIndex((e) => e.id === entries[prevIdx].firstKeptEntryId);
    const cut = pi.findCutPoint(entries, boundaryStart, entries.length, settings.keepRecentTokens);
    preparation = {
      firstKept: index(entries.find((e) => e.id === prep.firstKeptEntryId).message),
      turnStart: cut.isSplitTurn ? entryToMessage(entries, messages, cut.turnStartIndex) : -1,
      summarizeFrom: entryToMessage(entries, messages, boundaryStart),
      messagesToSummarize: prep.messagesToSummarize.map(index),
      turnPrefixMessages: prep.turnPrefixMessages.map(index),
      isSplitTurn: prep.isSplitTurn,
      tokensBefore: prep.tokensBefore,
      previousSummary: prep.previousSummary ?? null,
      fileOps: { read: [...prep.fileOps.read], written: [...prep.fileOps.written], edited: [...prep.fileOps.edited] },
    };
    compaction = await runCompact(prep, options);
    if (compaction.result) {
      const t = tr.ts();
      const { summary, firstKeptEntryId, tokensBefore, details } = compaction.result;
      const id = sm.appendCompaction(summary, firstKeptEntryId, tokensBefore, details, false);
      sm.getEntries().find((e) => e.id === id).timestamp = iso(t);
      after = { timestamp: t, context: contextOf(sm, messages) };
    }
  }

  return {
    name: `${String(n).padStart(3, "0")}-${kind}`,
    input: {
      messages,
      last: goCompaction(entries, messages),
      settings,
      options: {
        customInstructions: options.customInstructions ?? "",
        thinkingLevel: options.thinkingLevel ?? "",
        modelReasons: options.reasoningModel,
        timestamp: NOW,
      },
      answers: options.answers,
    },
    want: {
      estimates: messages.map((m) => pi.estimateTokens(m)),
      context: ctx,
      shouldCompact,
      cuts,
      preparation,
      requests: compaction?.requests ?? [],
      result: compaction?.result ? { ...compaction.result, firstKept: preparation.firstKept, firstKeptEntryId: undefined } : null,
      error: compaction?.error ?? null,
      after,
    },
  };
}

const cases = [];
for (let n = 0; n < CASES; n++) cases.push(await genCase(n));
faux.unregister();
// The Go test checks these hashes, so an edited generator or lock file
// without a regenerated golden file fails there.
const sha256 = (name) => createHash("sha256").update(readFileSync(new URL(name, import.meta.url))).digest("hex");
const inputs = { "gen.mjs": sha256("gen.mjs"), "package-lock.json": sha256("package-lock.json") };
const out = { pi: "@mariozechner/pi-coding-agent@0.73.1", inputs, cases };
// One case a line (zcat | diff shows which cases changed), gzipped: the
// transcripts are 4 MB of text and 0.5 MB compressed.
const head = JSON.stringify({ ...out, cases: [] }).slice(0, -2);
const text = `${head}\n${cases.map((c) => JSON.stringify(c)).join(",\n")}\n]}\n`;
writeFileSync(process.argv[2] ?? "testdata/golden.json.gz", gzipSync(text, { level: 9 }));
