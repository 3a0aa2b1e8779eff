// TipTap (ProseMirror) ships as ES modules; bundled like cm6.js.
import { Editor } from "@tiptap/core";
import StarterKit from "@tiptap/starter-kit";

window.TipTap = { Editor, StarterKit };
