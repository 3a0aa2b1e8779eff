// CodeMirror 6 ships as ES modules with bare imports; scripts/bootstrap.sh bundles this entry
// with esbuild into node_modules/.gallery/cm6.js for the gallery pages.
import { EditorView, basicSetup } from "codemirror";
import { sql } from "@codemirror/lang-sql";

window.CM6 = { EditorView, basicSetup, sql };
