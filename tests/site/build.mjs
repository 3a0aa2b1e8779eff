// Bundles the gallery's ES-module libraries (CodeMirror 6, TipTap) from node_modules into
// node_modules/.gallery/, so a fixture page loads each with one <script>. Run by
// scripts/bootstrap.sh --dev after `npm ci`; the output is never committed.
import { build } from "esbuild";

await build({
  entryPoints: { cm6: "gallery/bundles/cm6.js", tiptap: "gallery/bundles/tiptap.js" },
  bundle: true,
  format: "iife",
  minify: true,
  outdir: "node_modules/.gallery",
  logLevel: "warning",
});
