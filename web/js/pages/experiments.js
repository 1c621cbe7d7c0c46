// #/experiments: every experiment, newest first, with live status.

import { api, items } from "../api.js";
import { h, replace, timeEl } from "../dom.js";
import { isActive, colorMap } from "../results.js";
import { statusBadge, progressBar, apiErrorBox, emptyState, pageHeader, chip, poller } from "../ui.js";

const FILTERS = [
  ["", "All"],
  ["queued", "Queued"],
  ["running", "Running"],
  ["succeeded", "Succeeded"],
  ["failed", "Failed"],
  ["cancelled", "Cancelled"],
];
const PAGE = 20;

export function experimentsPage({ query, navigate, config = {} }) {
  const state = { status: query.get("status") || "", offset: Number(query.get("offset") || 0) };
  const filterBar = h("div", { class: "filters", role: "group", "aria-label": "Filter by status" });
  const body = h("div", { class: "card card-flush", "aria-live": "polite", "aria-busy": "true" }, h("p", { class: "loading pad" }, "Loading experiments…"));
  const pager = h("div", { class: "pager" });
  const el = h(
    "section",
    {},
    pageHeader("Experiments", {
      subtitle: "Each experiment runs a set of schedulers on the same trace and counts the embedding rows they pull and push, relative to the naive baseline.",
      actions: [h("a", { class: "btn btn-primary", href: "#/new" }, h("span", { "aria-hidden": "true" }, "+ "), "New experiment")],
    }),
    filterBar,
    body,
    pager,
    cliNote(config),
  );

  const setHash = () => {
    const q = new URLSearchParams();
    if (state.status) q.set("status", state.status);
    if (state.offset) q.set("offset", String(state.offset));
    const hash = `#/experiments${q.toString() ? `?${q}` : ""}`;
    history.replaceState(null, "", hash);
  };

  const renderFilters = () => {
    replace(
      filterBar,
      FILTERS.map(([value, text]) =>
        h(
          "button",
          {
            type: "button",
            class: "filter",
            "aria-pressed": state.status === value ? "true" : "false",
            onclick: () => {
              state.status = value;
              state.offset = 0;
              setHash();
              renderFilters();
              poll.poke();
            },
          },
          value ? statusDot(value) : null,
          text,
        ),
      ),
    );
  };

  const load = async () => {
    let payload;
    try {
      payload = await api.experiments({ status: state.status || undefined, limit: PAGE, offset: state.offset });
    } catch (err) {
      replace(body, h("div", { class: "pad" }, apiErrorBox(err, "Could not load the experiments")));
      body.setAttribute("aria-busy", "false");
      return true;
    }
    const list = items(payload);
    const count = typeof payload.count === "number" ? payload.count : list.length;
    body.setAttribute("aria-busy", "false");
    if (!list.length) {
      replace(
        body,
        state.status
          ? emptyState(`No ${state.status} experiments`, "Try another filter.")
          : emptyState(
              "No experiments yet",
              "Start with Herald's Table 1: naive, Herald and its two ablations on the criteo-kaggle workload.",
              h("a", { class: "btn btn-primary", href: "#/new?preset=herald-table1" }, "Run Herald's Table 1"),
              h("a", { class: "btn btn-secondary", href: "#/new" }, "Write a spec"),
            ),
      );
      replace(pager);
      return false;
    }
    replace(body, table(list, navigate));
    renderPager(count, list.length);
    return list.some((e) => isActive(e.status));
  };

  const renderPager = (count, shown) => {
    if (count <= PAGE && state.offset === 0) {
      replace(pager, h("span", { class: "muted" }, `${count} experiment${count === 1 ? "" : "s"}`));
      return;
    }
    const go = (offset) => () => {
      state.offset = Math.max(0, offset);
      setHash();
      poll.poke();
    };
    replace(
      pager,
      h("span", { class: "muted" }, `Showing ${state.offset + 1}–${state.offset + shown} of ${count}`),
      h("div", { class: "pager-buttons" }, h("button", { type: "button", class: "btn btn-secondary btn-small", disabled: state.offset === 0, onclick: go(state.offset - PAGE) }, "← Newer"), h("button", { type: "button", class: "btn btn-secondary btn-small", disabled: state.offset + shown >= count, onclick: go(state.offset + PAGE) }, "Older →")),
    );
  };

  renderFilters();
  const poll = poller(load, { fast: 2000, slow: 10000 }).start();
  return { el, title: "Experiments", destroy: () => poll.stop() };
}

function statusDot(status) {
  return h("span", { class: ["badge-dot", `dot-${status}`], "aria-hidden": "true" });
}

function table(list, navigate) {
  const rows = list.map((e) => {
    const href = `#/experiments/${e.id}`;
    const labels = e.schedulers || [];
    const colors = colorMap(labels.map((l) => ({ label: l, kind: String(l).split(/\s/)[0] })));
    const shown = labels.slice(0, 4);
    const progress = e.progress || { done: 0, total: 0 };
    return h(
      "tr",
      {
        class: "row-link",
        "data-id": e.id,
        onclick: (ev) => {
          if (ev.target.closest("a, button")) return;
          navigate(href);
        },
      },
      h("td", { class: "num muted col-id" }, `#${e.id}`),
      h("th", { scope: "row" }, h("a", { href, class: "strong-link" }, e.name || `experiment ${e.id}`)),
      h("td", {}, statusBadge(e.status)),
      h("td", { class: "col-progress" }, progressBar(progress.done || 0, progress.total || 0, { compact: true, status: e.status, label: `Progress of ${e.name}` })),
      h("td", { class: "col-schedulers" }, h("div", { class: "chips" }, shown.map((l) => chip(l, { color: colors.get(l) })), labels.length > shown.length ? chip(`+${labels.length - shown.length}`, { title: labels.slice(4).join(", ") }) : null)),
      h("td", { class: "muted col-mode" }, e.mode || "simulate"),
      h("td", { class: "muted nowrap col-created" }, timeEl(e.created_at)),
    );
  });
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "table", "data-testid": "experiments-table" },
      h("caption", { class: "visually-hidden" }, "Experiments, newest first"),
      h("thead", {}, h("tr", {}, [["ID", "col-id"], ["Name"], ["Status"], ["Progress", "col-progress"], ["Schedulers", "col-schedulers"], ["Mode", "col-mode"], ["Created", "col-created"]].map(([t, c]) => h("th", { scope: "col", class: c || null }, t)))),
      h("tbody", {}, rows),
    ),
  );
}


/** Where the command line's experiments are: they are files and MLflow runs, not rows here. */
function cliNote(cfg) {
  const home = cfg && cfg.home;
  if (!home) return null;
  return h(
    "p",
    { class: "hint", "data-testid": "cli-note" },
    "Experiments run from the command line (heraldbench run, heraldbench quickstart) are not listed here: their results are files under ",
    h("code", {}, home),
    " (results.json; heraldbench report turns one into the report)",
    cfg.mlflow_ui_url ? [" and runs in ", h("a", { href: cfg.mlflow_ui_url, target: "_blank", rel: "noopener noreferrer" }, "MLflow"), "."] : ".",
  );
}
