// The size goals of docs/architecture.md, measured: no source file (.py or .js) over 900
// lines, and no JS function over 200 lines. Functions are found by TypeScript's own parser
// (tests/site/node_modules, installed by scripts/bootstrap.sh --dev), so a brace inside a
// string or a regex cannot fool the count. Prints each breach; exits 1 if there is one.
//
//   node scripts/sizes.mjs            # the whole tree (what scripts/check.sh runs)
//   node scripts/sizes.mjs --top 10   # also list the ten longest JS functions
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const MAX_FILE_LINES = 900;
const MAX_FUNCTION_LINES = 200;

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(join(root, "tests/site/package.json"));
const ts = require("typescript");

const tracked = execFileSync(
  "git",
  ["ls-files", "--cached", "--others", "--exclude-standard", "--", "*.py", "*.js", "*.mjs"],
  { cwd: root, encoding: "utf8" },
)
  .split("\n")
  .filter((path) => path && !path.includes("node_modules/"));

const breaches = [];
const functions = [];

function lineOf(source, position) {
  return source.getLineAndCharacterOfPosition(position).line + 1;
}

function nameOf(node) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (parent && ts.isPropertyAssignment(parent) && parent.name) return parent.name.getText();
  return "(anonymous)";
}

function measure(path, text) {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.JS);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body) {
      const first = lineOf(source, node.getStart(source));
      const last = lineOf(source, node.getEnd());
      functions.push({ path, name: nameOf(node), first, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

for (const path of tracked) {
  let text;
  try {
    text = readFileSync(join(root, path), "utf8");
  } catch {
    continue; // deleted in the work tree but still in the index
  }
  const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  if (lines > MAX_FILE_LINES) breaches.push(`${path}: ${lines} lines (at most ${MAX_FILE_LINES})`);
  if (/\.m?js$/.test(path)) measure(path, text);
}

// A function's own length includes the functions nested in it: the goal is about the unit a
// reader has to hold at once, and a 600-line closure of small helpers is still 600 lines.
for (const fn of functions) {
  if (fn.lines > MAX_FUNCTION_LINES) {
    breaches.push(`${fn.path}:${fn.first}: function ${fn.name} is ${fn.lines} lines (at most ${MAX_FUNCTION_LINES})`);
  }
}

const top = process.argv.indexOf("--top");
if (top !== -1) {
  const count = Number(process.argv[top + 1] ?? 10);
  for (const fn of [...functions].sort((a, b) => b.lines - a.lines).slice(0, count)) {
    console.log(`${String(fn.lines).padStart(5)}  ${fn.path}:${fn.first}  ${fn.name}`);
  }
}
for (const breach of breaches) console.error(breach);
process.exit(breaches.length ? 1 : 0);
