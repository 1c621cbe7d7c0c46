// Shared pieces of the pages: badges, progress bars, alerts, polling.

import { h, isNum } from "./dom.js";

const STATUS_TEXT = {
  queued: "Queued",
  running: "Running",
  succeeded: "Succeeded",
  finished: "Succeeded",
  complete: "Complete",
  failed: "Failed",
  fail: "Failed",
  cancelled: "Cancelled",
  pruned: "Pruned",
  waiting: "Waiting",
  ready: "Ready",
  preparing: "Preparing",
};

export function statusBadge(status, extra = {}) {
  const key = String(status || "unknown").toLowerCase();
  return h("span", { class: ["badge", `badge-${key}`], "data-status": key, ...extra }, h("span", { class: "badge-dot", "aria-hidden": "true" }), STATUS_TEXT[key] || status || "unknown");
}

export function progressBar(done, total, { label = "Progress", compact = false, status = "" } = {}) {
  const pct = total > 0 ? Math.round((100 * done) / total) : status === "succeeded" ? 100 : 0;
  return h(
    "div",
    { class: ["progress", compact ? "progress-compact" : null, status ? `progress-${status}` : null] },
    h("div", { class: "progress-track", role: "progressbar", "aria-label": label, "aria-valuemin": "0", "aria-valuemax": String(total || 0), "aria-valuenow": String(done || 0), "aria-valuetext": `${done} of ${total} runs done` }, h("div", { class: "progress-fill", style: { width: `${pct}%` } })),
    h("span", { class: "progress-text" }, compact ? `${done}/${total}` : `${done} of ${total} runs done (${pct}%)`),
  );
}

export function alertBox(kind, title, ...body) {
  return h("div", { class: ["alert", `alert-${kind}`], role: kind === "error" ? "alert" : "status" }, title ? h("strong", { class: "alert-title" }, title) : null, ...body);
}

/** An alert for a failed request; a 401 gets a button that opens the token dialog. */
export function apiErrorBox(err, what = "The request failed") {
  if (err && err.status === 401) {
    err.handled = true;
    return alertBox(
      "error",
      "Not authorised (HTTP 401)",
      h("p", {}, "This server needs an API token for this action, and none (or a wrong one) was sent."),
      h("button", { type: "button", class: "btn btn-secondary btn-small", onclick: () => window.dispatchEvent(new CustomEvent("hb:open-token")) }, "Enter API token"),
    );
  }
  if (err && err.status === 0) return alertBox("error", "Service unreachable", h("p", {}, err.message));
  const list = err && Array.isArray(err.detail) ? err.detail : null;
  return alertBox(
    "error",
    `${what}${err && err.status ? ` (HTTP ${err.status})` : ""}`,
    list
      ? h(
          "ul",
          { class: "error-list" },
          list.map((d) => h("li", {}, d.field ? h("code", { class: "field-path" }, d.field) : null, d.field ? " " : null, d.message || JSON.stringify(d))),
        )
      : h("p", {}, err ? err.message : "Unknown error"),
  );
}

export function emptyState(title, text, ...actions) {
  return h("div", { class: "empty" }, h("div", { class: "empty-art", "aria-hidden": "true" }, emptyArt()), h("h2", {}, title), text ? h("p", {}, text) : null, actions.length ? h("div", { class: "empty-actions" }, actions) : null);
}

function emptyArt() {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 120 64");
  svg.setAttribute("width", "120");
  svg.setAttribute("height", "64");
  [
    [10, 30, 14, 30],
    [30, 18, 14, 42],
    [50, 38, 14, 22],
    [70, 10, 14, 50],
    [90, 26, 14, 34],
  ].forEach(([x, y, w, hh]) => {
    const r = document.createElementNS(ns, "rect");
    r.setAttribute("x", x);
    r.setAttribute("y", y);
    r.setAttribute("width", w);
    r.setAttribute("height", hh);
    r.setAttribute("rx", "3");
    svg.append(r);
  });
  return svg;
}

export function pageHeader(title, { subtitle = null, actions = [], crumbs = null, badge = null } = {}) {
  return h(
    "div",
    { class: "page-header" },
    crumbs ? h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, h("ol", {}, crumbs.map(([text, href]) => h("li", {}, href ? h("a", { href }, text) : h("span", { "aria-current": "page" }, text))))) : null,
    h("div", { class: "page-title-row" }, h("div", { class: "page-title" }, h("h1", { tabindex: "-1" }, title), badge), actions.length ? h("div", { class: "page-actions" }, actions) : null),
    subtitle ? h("p", { class: "page-subtitle" }, subtitle) : null,
  );
}

export function externalLink(href, text, extra = {}) {
  if (!href) return null;
  return h("a", { href, target: "_blank", rel: "noopener noreferrer", class: "external", ...extra }, text, h("span", { class: "visually-hidden" }, " (opens in a new tab)"), h("span", { "aria-hidden": "true", class: "ext-icon" }, "↗"));
}

export function statCard(label, value, note = null, extra = {}) {
  return h("div", { class: "stat", ...extra }, h("div", { class: "stat-label" }, label), h("div", { class: "stat-value" }, value), note ? h("div", { class: "stat-note" }, note) : null);
}

export function chip(text, { color = null, title = null } = {}) {
  return h("span", { class: "chip", title, style: color ? { "--chip": color } : null }, color ? h("span", { class: "chip-dot", "aria-hidden": "true" }) : null, text);
}

/** A segmented control of buttons (aria-pressed). */
export function segmented(label, options, value, onChange) {
  const group = h("div", { class: "segmented", role: "group", "aria-label": label });
  const render = (current) => {
    group.replaceChildren(
      ...options.map(([v, text]) =>
        h(
          "button",
          {
            type: "button",
            "aria-pressed": v === current ? "true" : "false",
            onclick: () => {
              render(v);
              onChange(v);
            },
          },
          text,
        ),
      ),
    );
  };
  render(value);
  return group;
}

export function selectField(label, options, value, onChange, extra = {}) {
  const id = extra.id || `sel-${Math.random().toString(36).slice(2, 8)}`;
  const select = h("select", { id, onchange: (e) => onChange(e.target.value) }, options.map(([v, text]) => h("option", { value: v, selected: v === value }, text)));
  return h("div", { class: "field-inline" }, h("label", { for: id }, label), select);
}

/**
 * Polls fn() (which returns true while something is live): every `fast` ms while live, every
 * `slow` ms (or never, when slow is null) otherwise; paused while the tab is hidden.
 */
export function poller(fn, { fast = 2000, slow = null } = {}) {
  let timer = null;
  let stopped = false;
  let running = false;
  const tick = async () => {
    if (stopped || running) return;
    if (document.hidden) {
      timer = setTimeout(tick, 500);
      return;
    }
    running = true;
    let live = false;
    try {
      live = await fn();
    } catch {
      live = true; // try again; the page shows the error
    }
    running = false;
    if (stopped) return;
    const wait = live ? fast : slow;
    if (wait !== null && wait !== undefined) timer = setTimeout(tick, wait);
  };
  return {
    start() {
      tick();
      return this;
    },
    poke() {
      clearTimeout(timer);
      tick();
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

export function pct(v) {
  return isNum(v) ? `${(v * 100).toFixed(1)}%` : "—";
}

export function infoTip(text) {
  return h("span", { class: "info-tip", tabindex: "0", role: "note", "aria-label": text, "data-tip": text }, "?");
}
