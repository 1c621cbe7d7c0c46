// The spec editor: a textarea with line numbers, YAML/JSON parsing and field-path lookup.

import yaml from "../vendor/js-yaml/js-yaml.mjs";
import { h, clear } from "./dom.js";

// ------------------------------------------------------------------ parse / dump

/** Parse YAML (or JSON, which is YAML too): {ok, value} or {ok: false, message, line}. */
export function parseSpecText(text) {
  if (!text.trim()) return { ok: false, message: "The spec is empty.", line: null };
  try {
    const value = yaml.load(text, { json: true });
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      return { ok: false, message: "A spec must be a mapping of fields (name, dataset, schedulers, ...).", line: null };
    }
    return { ok: true, value };
  } catch (err) {
    const line = err && err.mark ? err.mark.line : null;
    const reason = (err && err.reason) || String(err && err.message ? err.message : err);
    return { ok: false, message: `Syntax error${line !== null ? ` on line ${line + 1}` : ""}: ${reason}`, line };
  }
}

function flow(value) {
  return yaml.dump(value, { flowLevel: 0, lineWidth: -1, noRefs: true, sortKeys: false }).trim();
}

/** YAML that reads like the examples: sections in flow style, one scheduler per line. */
export function toYaml(doc, comment) {
  const lines = comment ? comment.split("\n").flatMap((l) => wrap(l, 92)).map((l) => `# ${l}`) : [];
  for (const [key, value] of Object.entries(doc || {})) {
    const k = flow(key);
    if (Array.isArray(value) && value.some((x) => x && typeof x === "object")) {
      lines.push(`${k}:`);
      for (const item of value) lines.push(`  - ${flow(item)}`);
    } else if (value && typeof value === "object" && !Array.isArray(value)) {
      const f = flow(value);
      if (k.length + f.length < 96) lines.push(`${k}: ${f}`);
      else {
        lines.push(`${k}:`);
        for (const [k2, v2] of Object.entries(value)) lines.push(`  ${flow(k2)}: ${flow(v2)}`);
      }
    } else {
      lines.push(`${k}: ${flow(value)}`);
    }
  }
  return lines.join("\n") + "\n";
}

function wrap(text, width) {
  const out = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      out.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line || !out.length) out.push(line);
  return out;
}

export function toJson(doc) {
  return JSON.stringify(doc, null, 2) + "\n";
}

export function looksLikeJson(text) {
  return /^\s*[{[]/.test(text);
}

// ------------------------------------------------------------------ field paths

function lineStart(text, pos) {
  return text.lastIndexOf("\n", pos - 1) + 1;
}

function lineEnd(text, pos) {
  const e = text.indexOf("\n", pos);
  return e < 0 ? text.length : e;
}

function indentAt(text, pos) {
  const ls = lineStart(text, pos);
  let i = ls;
  while (text[i] === " " || text[i] === "\t") i += 1;
  return i - ls;
}

/** Index of the bracket closing the one at `open`, skipping quoted strings. */
function matching(text, open, limit) {
  let depth = 0;
  let quote = null;
  for (let i = open; i < limit; i += 1) {
    const c = text[i];
    if (quote) {
      if (c === "\\") i += 1;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === "{" || c === "[") depth += 1;
    else if (c === "}" || c === "]") {
      depth -= 1;
      if (depth === 0) return i;
    }
  }
  return limit;
}

function skipSpace(text, pos, limit) {
  while (pos < limit && /[ \t]/.test(text[pos])) pos += 1;
  return pos;
}

/** The extent [start, end) of the value that begins after a key's colon at `colon`. */
function valueScope(text, colon, limit) {
  const keyIndent = indentAt(text, colon);
  const v = skipSpace(text, colon + 1, limit);
  if (text[v] === "{" || text[v] === "[") return { start: v, end: Math.min(limit, matching(text, v, limit) + 1) };
  if (v < limit && text[v] !== "\n" && text[v] !== "#" && text[v] !== "\r") return { start: v, end: lineEnd(text, v) };
  // block value: following lines indented deeper (or "- " items at the same indent)
  let pos = lineEnd(text, colon) + 1;
  let end = pos;
  while (pos < limit) {
    const le = lineEnd(text, pos);
    const line = text.slice(pos, le);
    if (line.trim() && !line.trim().startsWith("#")) {
      const ind = line.length - line.trimStart().length;
      if (ind < keyIndent || (ind === keyIndent && !line.trimStart().startsWith("-"))) break;
      end = le;
    }
    pos = le + 1;
  }
  return { start: colon + 1, end: Math.min(limit, Math.max(end, colon + 1)) };
}

/** Bracket depth at `pos`, counted from `from` (quoted strings skipped). */
function depthBetween(text, from, pos) {
  let depth = 0;
  let quote = null;
  for (let i = from; i < pos; i += 1) {
    const c = text[i];
    if (quote) {
      if (c === "\\") i += 1;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "{" || c === "[") depth += 1;
    else if (c === "}" || c === "]") depth -= 1;
  }
  return depth;
}

/** The key `key` directly in the mapping that spans [start, end), not in a nested one. */
function findKey(text, key, start, end) {
  const first = text.slice(start, end).search(/[^\s-]/);
  const base = first >= 0 && text[start + first] === "{" ? 1 : 0;
  const anyKey = /(^|[\s{,])(["']?[\w.-]+["']?)[ \t]*:/gm;
  const esc = key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const wanted = new RegExp(`^["']?${esc}["']?$`);
  anyKey.lastIndex = start;
  let column = null;
  let m;
  while ((m = anyKey.exec(text)) !== null) {
    const keyStart = m.index + m[1].length;
    if (keyStart >= end) return null;
    if (depthBetween(text, start, keyStart) !== base) continue;
    const col = keyStart - lineStart(text, keyStart);
    if (base === 0) {
      if (column === null) column = col;
      if (col !== column) continue;
    }
    if (wanted.test(m[2])) return { start: keyStart, end: keyStart + m[2].length, colon: m.index + m[0].length - 1 };
  }
  return null;
}

function nthItem(text, scope, n) {
  const v = skipSpace(text, scope.start, scope.end);
  const first = text.slice(v, scope.end).search(/\S/);
  const at = first < 0 ? scope.end : v + first;
  if (text[at] === "[") {
    // flow list: item n starts after n commas at depth 1
    let depth = 0;
    let quote = null;
    let count = 0;
    let itemStart = null;
    for (let i = at; i < scope.end; i += 1) {
      const c = text[i];
      if (quote) {
        if (c === "\\") i += 1;
        else if (c === quote) quote = null;
        continue;
      }
      if (c === '"' || c === "'") quote = c;
      else if (c === "[" || c === "{") {
        depth += 1;
        if (depth === 1) continue;
      } else if (c === "]" || c === "}") {
        if (depth === 1 && itemStart !== null) return { start: itemStart, end: i };
        depth -= 1;
      } else if (c === "," && depth === 1) {
        if (count === n && itemStart !== null) return { start: itemStart, end: i };
        count += 1;
        itemStart = null;
        continue;
      }
      if (depth >= 1 && count === n && itemStart === null && /\S/.test(c)) itemStart = i;
    }
    return null;
  }
  // block list: lines "- " at the first item's indent
  const re = /^([ \t]*)-(?=\s)/gm;
  re.lastIndex = scope.start;
  let indent = null;
  let count = 0;
  let found = null;
  let m;
  while ((m = re.exec(text)) !== null && m.index < scope.end) {
    if (indent === null) indent = m[1].length;
    if (m[1].length !== indent) continue;
    if (found) return { start: found, end: m.index };
    if (count === n) found = m.index + m[1].length;
    count += 1;
  }
  return found !== null ? { start: found, end: scope.end } : null;
}

/**
 * Where a field path such as "cluster.workers" or "schedulers.1.herald.lookahead" sits in the
 * text: {start, end, line} of the deepest part found (segments not in the text, like a
 * discriminator tag, are skipped), or null.
 */
export function locatePath(text, path) {
  if (!path || path === "(spec)" || path === "body") return null;
  const segments = String(path)
    .replace(/^body\./, "")
    .split(".")
    .filter(Boolean);
  let scope = { start: 0, end: text.length };
  let hit = null;
  for (const seg of segments) {
    if (/^\d+$/.test(seg)) {
      const item = nthItem(text, scope, Number(seg));
      if (!item) continue;
      hit = { start: item.start, end: Math.min(item.end, lineEnd(text, item.start)) };
      scope = item;
    } else {
      const key = findKey(text, seg, scope.start, scope.end);
      if (!key) continue;
      hit = { start: key.start, end: key.end };
      scope = valueScope(text, key.colon, scope.end);
    }
  }
  if (!hit) return null;
  return { ...hit, line: text.slice(0, hit.start).split("\n").length - 1 };
}

// ------------------------------------------------------------------ the component

/**
 * createEditor({value, label, onChange, onSubmit}) → {el, textarea, value, setValue, mark, select}
 */
export function createEditor({ value = "", id = "spec-editor", describedBy = null, onChange, onSubmit }) {
  const gutter = h("div", { class: "editor-gutter", "aria-hidden": "true" });
  const textarea = h("textarea", {
    id,
    class: "editor-text",
    spellcheck: "false",
    autocapitalize: "off",
    autocomplete: "off",
    wrap: "off",
    "aria-describedby": describedBy,
    "data-testid": "spec-editor",
  });
  textarea.value = value;
  const el = h("div", { class: "editor" }, gutter, textarea);
  let marks = new Map();

  const renderGutter = () => {
    const n = textarea.value.split("\n").length;
    clear(gutter);
    const frag = document.createDocumentFragment();
    for (let i = 0; i < n; i += 1) {
      const msg = marks.get(i);
      frag.append(h("div", { class: ["gutter-line", msg ? "has-error" : null], title: msg || null }, String(i + 1)));
    }
    gutter.append(frag);
    gutter.scrollTop = textarea.scrollTop;
  };

  textarea.addEventListener("input", () => {
    if (marks.size) marks = new Map();
    renderGutter();
    if (onChange) onChange(textarea.value);
  });
  textarea.addEventListener("scroll", () => {
    gutter.scrollTop = textarea.scrollTop;
  });
  textarea.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter" && onSubmit) {
      e.preventDefault();
      onSubmit();
    }
  });
  renderGutter();

  return {
    el,
    textarea,
    get value() {
      return textarea.value;
    },
    setValue(text) {
      textarea.value = text;
      // fit the editor to the spec (the user can still drag it taller)
      const rows = text.split("\n").length;
      el.style.height = `${Math.max(280, Math.min(600, rows * 20 + 40))}px`;
      marks = new Map();
      renderGutter();
      if (onChange) onChange(text);
    },
    /** Mark lines: [{line, message}] (0-based). */
    mark(list) {
      marks = new Map();
      for (const { line, message } of list) if (line !== null && line !== undefined) marks.set(line, marks.has(line) ? `${marks.get(line)}\n${message}` : message);
      renderGutter();
    },
    /** Select [start, end) and scroll it into view. */
    select(start, end) {
      textarea.focus();
      textarea.setSelectionRange(start, end);
      const line = textarea.value.slice(0, start).split("\n").length - 1;
      const lh = parseFloat(getComputedStyle(textarea).lineHeight) || 20;
      textarea.scrollTop = Math.max(0, line * lh - textarea.clientHeight / 3);
    },
  };
}
