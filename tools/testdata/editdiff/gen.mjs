// Writes golden.json: generated edits and the diff pi 0.73.1's edit tool
// prints for each (generateDiffString, which renders jsdiff's diffLines).
// TestEditDiffMatchesPi requires the same text and first changed line.
//
//   node tools/testdata/editdiff/gen.mjs [golden.json]
//
// PI_CODING_AGENT is the unpacked @mariozechner/pi-coding-agent 0.73.1 with
// the diff package resolvable from it, e.g.
//
//   npm pack @mariozechner/pi-coding-agent@0.73.1 && tar xzf mariozechner-pi-coding-agent-0.73.1.tgz
//   cd package && npm install --no-save diff@8.0.4 && export PI_CODING_AGENT=$PWD
import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const pkg = process.env.PI_CODING_AGENT;
if (!pkg) throw new Error("set PI_CODING_AGENT to the unpacked pi-coding-agent package");
const editDiff = path.join(pkg, "dist/core/tools/edit-diff.js");
const { generateDiffString } = await import(pathToFileURL(editDiff).href);

// mulberry32: the same cases on every run.
let seed = 15;
function rand() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (n) => Math.floor(rand() * n);
const pick = (a) => a[int(a.length)];

// Repeated lines (braces, blank lines, returns) are what give a line diff
// several shortest answers, so both pools are full of them.
const letters = ["a", "b", "c", "d", "}", "", "\treturn nil", "x"];
const code = [
  "func f() error {", "\tx := 1", "\tif err != nil {", "\t\treturn err", "\t}", "\treturn nil", "}", "",
  "// A comment.", "\tfor _, v := range xs {", "\t\tcount++", "\ty := x + 1", "import (", ")", "\t\"fmt\"",
];

// mutate makes one to three changes of the kinds an edit makes.
function mutate(lines, pool) {
  let out = lines.slice();
  for (let n = 1 + int(3); n > 0; n--) {
    if (out.length === 0) {
      out.push(pick(pool));
      continue;
    }
    const i = int(out.length);
    const j = Math.min(out.length, i + 1 + int(6));
    const region = out.slice(i, j);
    let repl = [];
    switch (int(6)) {
      case 0: break; // delete
      case 1: repl = [pick(pool), ...region]; break; // insert
      case 2: repl = region.map((l) => (rand() < 0.5 ? pick(pool) : l)); break; // change
      case 3: repl = [...region, ...region]; break; // duplicate
      case 4: repl = ["if ok {", ...region.map((l) => "\t" + l), "}"]; break; // wrap
      case 5: for (let k = int(5); k > 0; k--) repl.push(pick(pool)); break; // replace
    }
    out = [...out.slice(0, i), ...repl, ...out.slice(j)];
  }
  return out;
}

const text = (lines, newline) => (lines.length ? lines.join("\n") + (newline ? "\n" : "") : "");
const cases = [
  { name: "empty to text", old: "", new: "a\nb\n" },
  { name: "text to empty", old: "a\nb\n", new: "" },
  { name: "unchanged", old: "a\nb\n", new: "a\nb\n" },
  { name: "newline added at the end", old: "a\nb", new: "a\nb\n" },
  { name: "newline removed at the end", old: "a\nb\n", new: "a\nb" },
  { name: "blank lines only", old: "\n\n\n", new: "\n\n" },
];
for (let n = 0; n < 400; n++) {
  const lines = Array.from({ length: int(30) }, () => pick(letters));
  cases.push({ name: `letters ${n}`, old: text(lines, rand() < 0.75), new: text(mutate(lines, letters), rand() < 0.75) });
}
for (let n = 0; n < 100; n++) {
  const lines = Array.from({ length: 30 + int(60) }, () => pick(code));
  cases.push({ name: `code ${n}`, old: text(lines, true), new: text(mutate(lines, code), true) });
}

const golden = cases.map((c) => {
  const { diff, firstChangedLine } = generateDiffString(c.old, c.new);
  return { ...c, diff, firstChangedLine: firstChangedLine ?? 0 };
});
const out = process.argv[2] ?? path.join(here, "golden.json");
writeFileSync(out, JSON.stringify(golden, null, 1) + "\n");
console.log(`${golden.length} cases written to ${out}`);
