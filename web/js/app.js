// The single-page app: hash routes, the top bar (health, MLflow, token) and page lifecycle.

import { api, config, reloadConfig, getToken, setToken } from "./api.js";
import { h, replace, clear } from "./dom.js";
import { externalLink, alertBox } from "./ui.js";
import { experimentsPage } from "./pages/experiments.js";
import { experimentPage } from "./pages/experiment.js";
import { newExperimentPage } from "./pages/new.js";
import { studiesPage, studyPage } from "./pages/studies.js";
import { datasetsPage } from "./pages/datasets.js";

const ROUTES = [
  [/^\/?$/, () => ({ redirect: "#/experiments" })],
  [/^\/experiments\/?$/, () => ({ page: experimentsPage, nav: "experiments" })],
  [/^\/experiments\/(\d+)\/?$/, (m) => ({ page: experimentPage, params: { id: Number(m[1]) }, nav: "experiments" })],
  [/^\/new\/?$/, () => ({ page: newExperimentPage, nav: "new" })],
  [/^\/studies\/?$/, () => ({ page: studiesPage, nav: "studies" })],
  [/^\/studies\/(\d+)\/?$/, (m) => ({ page: studyPage, params: { id: Number(m[1]) }, nav: "studies" })],
  [/^\/datasets\/?$/, () => ({ page: datasetsPage, nav: "datasets" })],
];

let current = null;

function parseHash() {
  const raw = decodeURIComponent((location.hash || "#/").slice(1));
  const [path, query = ""] = raw.split("?");
  return { path: path || "/", query: new URLSearchParams(query) };
}

function notFound(path) {
  return {
    el: h("div", { class: "empty" }, h("h1", { tabindex: "-1" }, "Page not found"), h("p", {}, `Nothing lives at #${path}.`), h("a", { class: "btn btn-primary", href: "#/experiments" }, "Go to experiments")),
  };
}

async function route() {
  const { path, query } = parseHash();
  let match = null;
  for (const [re, make] of ROUTES) {
    const m = path.match(re);
    if (m) {
      match = make(m);
      break;
    }
  }
  if (match && match.redirect) {
    location.replace(match.redirect);
    return;
  }
  if (current && current.destroy) current.destroy();
  current = null;
  for (const a of document.querySelectorAll(".nav a")) {
    if (match && a.dataset.route === match.nav) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const root = document.getElementById("app");
  const focusMain = root.dataset.routed === "1"; // move focus on navigation, not on first load
  root.dataset.routed = "1";
  const cfg = await config();
  const rendered = match ? match.page({ params: match.params || {}, query, config: cfg, navigate }) : notFound(path);
  current = rendered;
  replace(root, rendered.el);
  document.title = rendered.title ? `${rendered.title} · heraldbench` : "heraldbench";
  window.scrollTo(0, 0);
  if (focusMain) {
    const h1 = root.querySelector("h1");
    (h1 || document.getElementById("main")).focus({ preventScroll: true });
  }
}

export function navigate(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

// ------------------------------------------------------------------ top bar

function renderTools(cfg) {
  const tools = document.getElementById("topbar-tools");
  clear(tools);
  if (cfg.mlflow_ui_url) tools.append(externalLink(cfg.mlflow_ui_url, "MLflow", { class: "external toplink", "data-testid": "mlflow-link" }));
  else if (cfg.mlflow_ui_state === "starting") tools.append(h("span", { class: "toplink muted", "data-testid": "mlflow-starting", title: "MLflow's UI is starting; its link appears once it answers" }, "MLflow starting…"));
  if (cfg.dask_dashboard_url) tools.append(externalLink(cfg.dask_dashboard_url, "Dask", { class: "external toplink" }));
  if (cfg.auth_required) {
    const has = Boolean(getToken());
    tools.append(
      h(
        "button",
        { type: "button", class: ["btn", "btn-small", has ? "btn-ghost-light" : "btn-warn"], id: "token-button", onclick: openTokenDialog, "aria-haspopup": "dialog" },
        lockIcon(has),
        has ? "Token set" : "Set API token",
      ),
    );
  }
}

function lockIcon(open) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 16 16");
  svg.setAttribute("width", "14");
  svg.setAttribute("height", "14");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("class", "icon");
  const body = document.createElementNS(ns, "rect");
  for (const [k, v] of Object.entries({ x: 2.5, y: 7, width: 11, height: 8, rx: 1.5, fill: "currentColor" })) body.setAttribute(k, v);
  const shackle = document.createElementNS(ns, "path");
  shackle.setAttribute("d", open ? "M5 7V4.5a3 3 0 0 1 5.8-1" : "M5 7V4.5a3 3 0 0 1 6 0V7");
  shackle.setAttribute("fill", "none");
  shackle.setAttribute("stroke", "currentColor");
  shackle.setAttribute("stroke-width", "1.6");
  svg.append(shackle, body);
  return svg;
}

function openTokenDialog() {
  const dialog = document.getElementById("token-dialog");
  const input = document.getElementById("token-input");
  input.value = getToken();
  if (typeof dialog.showModal === "function") dialog.showModal();
  else dialog.setAttribute("open", "");
  input.focus();
}

function setupTokenDialog() {
  const dialog = document.getElementById("token-dialog");
  const input = document.getElementById("token-input");
  const close = () => (typeof dialog.close === "function" ? dialog.close() : dialog.removeAttribute("open"));
  document.getElementById("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    setToken(input.value.trim());
    close();
    clearBanner();
  });
  document.getElementById("token-cancel").addEventListener("click", close);
  document.getElementById("token-clear").addEventListener("click", () => {
    setToken("");
    input.value = "";
    close();
  });
  window.addEventListener("hb:open-token", openTokenDialog);
  window.addEventListener("hb:token", async () => {
    const before = await config();
    const cfg = before.unavailable ? await reloadConfig() : before;
    renderTools(cfg);
    if (before.unavailable) route(); // the first load failed for want of a token
  });
  window.addEventListener("hb:unauthorized", () => {
    if (document.querySelector("#banner [data-kind='401']")) return; // already shown
    showBanner(
      alertBox(
        "error",
        "Not authorised (HTTP 401)",
        h("span", {}, " This server needs an API token to submit or cancel work. "),
        h("button", { type: "button", class: "btn btn-small btn-secondary", onclick: openTokenDialog }, "Enter API token"),
      ),
    );
  });
}

function showBanner(content) {
  const banner = document.getElementById("banner");
  replace(banner, h("div", { class: "banner", "data-kind": "401" }, content, h("button", { type: "button", class: "banner-close", "aria-label": "Dismiss", onclick: clearBanner }, "×")));
}

function clearBanner() {
  clear(document.getElementById("banner"));
}

async function renderHealth() {
  const el = document.getElementById("footer-health");
  try {
    const health = await api.health();
    const dask = health.dask === "ok";
    replace(
      el,
      h("span", { class: ["health", health.status === "ok" ? "health-ok" : "health-bad"], title: `database: ${health.database}; dask: ${health.dask}` }, h("span", { class: "health-dot", "aria-hidden": "true" }), `API ${health.status}`),
      h("span", { class: ["health", dask ? "health-ok" : "health-warn"] }, h("span", { class: "health-dot", "aria-hidden": "true" }), `Dask ${health.dask}`),
      health.version ? h("span", { class: "muted" }, `v${health.version}`) : null,
    );
  } catch {
    replace(el, h("span", { class: "health health-bad" }, h("span", { class: "health-dot", "aria-hidden": "true" }), "API unreachable"));
  }
}

/** While MLflow's UI starts, ask again until it answers (or fails): its links appear then. */
async function watchMlflow(cfg) {
  while (cfg.mlflow_ui_state === "starting") {
    await new Promise((resolve) => setTimeout(resolve, 1500));
    try {
      Object.assign(cfg, await api.config()); // the pages hold this object: they see it too
    } catch {
      return;
    }
  }
  renderTools(cfg);
  if (cfg.mlflow_ui_url) route();
}

async function start() {
  setupTokenDialog();
  window.addEventListener("hashchange", route);
  route();
  const cfg = await config();
  renderTools(cfg);
  watchMlflow(cfg);
  renderHealth();
  setInterval(renderHealth, 30000);
}

start();
