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
  init(seed: number): number;
  probe(): { url: string; title: string; mutations: number; new_interactive: number };
  [name: string]: unknown;
}

declare var __handrail: HandrailEyes;
