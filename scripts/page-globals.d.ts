// The names a page script finds in scope without declaring them: what its loader binds
// around it, and what another group left on globalThis. Read by scripts/tsconfig/*.json.

/** A sensitive form field: core/world/sensitive.js. */
interface SensitiveVerdict {
  kind: "password" | "one-time code" | "card";
  why: string;
}

/** core/world/sensitive.js with its words bound (core/world/sensitive.py judge_source()):
 * the eyes' loader declares it before their stages, the hands' loader passes it in. */
declare function judgeSensitive(el: Element): SensitiveVerdict | null;

/** The eyes' API (core/eyes/api.js), defined once per world of ours. */
interface HandrailEyes {
  /** The element shown as [i]; throws "handrail:stale:i" or "handrail:unknown:i". */
  element(i: number): Element;
  /** The element's index (assigned on first sight, never reused). */
  indexOf(el: Element): number;
  accessibleName(el: Element): string;
  /** The code editor (core/eyes/editors.js) `el` is or is inside: its box and its field. */
  codeEditor(el: Element): { root: Element; input: Element } | null;
  /** The text a code editor `el` is in shows, or null for anything else. */
  codeEditorValue(el: Element): string | null;
  init(seed: number): number;
  probe(): { url: string; title: string; mutations: number; new_interactive: number };
  /** How long the log of restyles has been kept, in ms (0: not yet). */
  restyleLogAge(): number;
  /** The elements restyled within the last `ms`, and how long the log has been kept. */
  restyledWithin(ms: number): { elements: Element[]; watchedMs: number };
  [name: string]: unknown;
}

declare var __handrail: HandrailEyes;

/** The Navigation API (Chrome 102+), not yet in TypeScript's DOM library: what settle.js uses. */
declare var navigation:
  | { addEventListener(type: string, listener: (event: any) => void): void; currentEntry?: unknown }
  | undefined;
