// Regenerates golden.json from cases.json by running pi-ai's own
// validateToolArguments (0.73.1, TypeBox 1.x) on every case.
//
//   node internal/typebox/testdata/validation/gen.mjs [cases.json [golden.json]]
//
// PI_NODE_MODULES points at a node_modules holding @mariozechner/pi-ai and
// typebox; it defaults to the conformance reference install.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const nodeModules = process.env.PI_NODE_MODULES ?? "/work/shared/conformance/reference/node_modules";
const validationJs = path.join(nodeModules, "@mariozechner/pi-ai/dist/utils/validation.js");
const { validateToolArguments } = await import(pathToFileURL(validationJs).href);

// Go decodes arguments into a map, which has no key order; the Go side
// renders keys sorted (after array indexes, which JavaScript always puts
// first). Feeding pi the same order makes "Received arguments" comparable.
// Strings are made well formed because Go cannot hold a lone surrogate.
function canonical(value) {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value === "string") return value.toWellFormed();
  if (value === null || typeof value !== "object") return value;
  const out = {};
  for (const key of Object.keys(value).sort()) out[key] = canonical(value[key]);
  return out;
}

const casesPath = process.argv[2] ?? path.join(here, "cases.json");
const goldenPath = process.argv[3] ?? path.join(here, "golden.json");
const cases = JSON.parse(readFileSync(casesPath, "utf8"));
const names = new Set();
const golden = cases.map((c) => {
  if (names.has(c.name)) throw new Error(`duplicate case name ${c.name}`);
  names.add(c.name);
  const tool = { name: c.tool ?? "demo", description: "", parameters: c.schema };
  const toolCall = { type: "toolCall", id: "call_1", name: tool.name, arguments: canonical(c.args) };
  try {
    const result = validateToolArguments(tool, toolCall);
    return { name: c.name, ok: true, result, resultJSON: JSON.stringify(result, null, 2) };
  } catch (error) {
    return { name: c.name, ok: false, error: error.message, errorType: error.constructor.name };
  }
});
writeFileSync(goldenPath, JSON.stringify(golden, null, 2) + "\n");
console.log(`wrote ${golden.length} golden results`);
