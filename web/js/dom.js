// Small DOM and formatting helpers. Every string goes in as text, never as HTML.

const SVG_NS = "http://www.w3.org/2000/svg";

function apply(el, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.setAttribute("class", Array.isArray(value) ? value.filter(Boolean).join(" ") : value);
    else if (key === "style" && typeof value === "object") {
      for (const [prop, v] of Object.entries(value)) {
        if (v === null || v === undefined) continue;
        if (prop.startsWith("--") || prop.includes("-")) el.style.setProperty(prop, v);
        else el.style[prop] = v;
      }
    }
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "value" && "value" in el) el.value = value;
    else if (key === "checked" || key === "selected" || key === "disabled") el[key] = Boolean(value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** h("a", {href: "#/x", class: "link"}, "text", child, [more]) */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs && (attrs instanceof Node || typeof attrs !== "object" || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  apply(el, attrs);
  append(el, children);
  return el;
}

/** The same for SVG elements. */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export function replace(el, ...children) {
  clear(el);
  append(el, children);
  return el;
}

// ---------------------------------------------------------------- formatting

const intFmt = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

export function isNum(v) {
  return typeof v === "number" && Number.isFinite(v);
}

export function fmtInt(v) {
  return isNum(v) ? intFmt.format(Math.round(v)) : "—";
}

export function fmtFixed(v, digits = 3) {
  return isNum(v) ? v.toFixed(digits) : "—";
}

/** 12,345 → "12.3 k", 3,400,000 → "3.40 M" */
export function fmtCompact(v) {
  if (!isNum(v)) return "—";
  const a = Math.abs(v);
  if (a >= 1e9) return (v / 1e9).toFixed(a >= 1e10 ? 1 : 2) + " G";
  if (a >= 1e6) return (v / 1e6).toFixed(a >= 1e7 ? 1 : 2) + " M";
  if (a >= 1e4) return (v / 1e3).toFixed(a >= 1e5 ? 0 : 1) + " k";
  return intFmt.format(v);
}

export function fmtBytes(v) {
  if (!isNum(v)) return "—";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  let x = v;
  while (Math.abs(x) >= 1024 && i < units.length - 1) {
    x /= 1024;
    i += 1;
  }
  return `${x.toFixed(i === 0 ? 0 : x >= 100 ? 0 : 1)} ${units[i]}`;
}

export function fmtSeconds(v) {
  if (!isNum(v)) return "—";
  if (v < 1e-3) return `${(v * 1e6).toFixed(1)} µs`;
  if (v < 1) return `${(v * 1e3).toFixed(v < 0.01 ? 3 : 1)} ms`;
  if (v < 120) return `${v.toFixed(1)} s`;
  return `${Math.floor(v / 60)} min ${Math.round(v % 60)} s`;
}

export function fmtValue(v) {
  if (v === null || v === undefined) return "—";
  if (isNum(v)) return Number.isInteger(v) ? fmtInt(v) : String(+v.toPrecision(4));
  if (Array.isArray(v)) return v.map(fmtValue).join(", ");
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

export function parseTime(iso) {
  if (!iso) return null;
  // The API sends UTC; tolerate a timestamp without a zone.
  const t = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(iso) ? iso : `${iso}Z`);
  return Number.isNaN(t) ? null : new Date(t);
}

export function fmtAgo(iso) {
  const d = parseTime(iso);
  if (!d) return "—";
  const sec = Math.round((Date.now() - d.getTime()) / 1000);
  if (sec < 5) return "just now";
  if (sec < 60) return `${sec} s ago`;
  if (sec < 3600) return `${Math.floor(sec / 60)} min ago`;
  if (sec < 86400) return `${Math.floor(sec / 3600)} h ago`;
  return d.toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" });
}

export function fmtDate(iso) {
  const d = parseTime(iso);
  return d ? d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" }) : "—";
}

/** A <time> element: relative text, the absolute time as tooltip. */
export function timeEl(iso) {
  return h("time", { datetime: iso || "", title: fmtDate(iso) }, fmtAgo(iso));
}

export function debounce(fn, ms) {
  let t = null;
  return (...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), ms);
  };
}

let uid = 0;
export function nextId(prefix = "id") {
  uid += 1;
  return `${prefix}-${uid}`;
}
