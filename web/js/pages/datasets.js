// #/datasets: registered datasets and a form to prepare a new one.

import { api, items } from "../api.js";
import { h, replace, fmtValue, isNum, fmtCompact } from "../dom.js";
import { toYaml } from "../editor.js";
import { isActive } from "../results.js";
import { statusBadge, apiErrorBox, alertBox, emptyState, pageHeader, poller } from "../ui.js";
import { DRAFT_KEY } from "./experiment.js";

const KINDS = [
  ["criteo-tsv", "Criteo TSV"],
  ["avazu-csv", "Avazu CSV"],
  ["movielens", "MovieLens"],
];

export function datasetsPage({ navigate, config }) {
  const folders = (config.data_dirs || []).length ? ` Allowed folders: ${config.data_dirs.join(", ")}.` : "";
  const body = h("div", { class: "card card-flush", "aria-live": "polite" }, h("p", { class: "loading pad" }, "Loading datasets…"));
  const formResult = h("div", { "aria-live": "polite" });
  const fields = {
    name: h("input", { id: "ds-name", name: "name", required: true, pattern: "[A-Za-z0-9][A-Za-z0-9_.\\-]*", autocomplete: "off", placeholder: "criteo-kaggle" }),
    kind: h("select", { id: "ds-kind", name: "kind", "aria-describedby": "ds-kind-help" }, KINDS.map(([v, t]) => h("option", { value: v }, t))),
    path: h("input", { id: "ds-path", name: "path", required: true, autocomplete: "off", placeholder: "data/criteo/train.txt", "aria-describedby": "ds-path-help" }),
    threshold: h("input", { id: "ds-threshold", name: "frequency_threshold", type: "number", min: "0", step: "1", inputmode: "numeric", placeholder: "optional", "aria-describedby": "ds-threshold-help" }),
  };
  const submitBtn = h("button", { type: "submit", class: "btn btn-primary" }, "Prepare dataset");
  const form = h(
    "form",
    { class: "card form-card", "aria-labelledby": "ds-form-title", novalidate: true },
    h("h2", { id: "ds-form-title" }, "Add a dataset"),
    h("p", { class: "muted" }, "Preparing maps every categorical value to a contiguous embedding row once, so experiments can stream the trace quickly."),
    h("div", { class: "form-grid" }, field("Name", fields.name), field("Format", fields.kind, "Criteo: Kaggle train.txt layout (gzip read transparently). MovieLens: u.data, ratings.dat or ratings.csv.", "ds-kind-help"), field("Path", fields.path, `A file under one of the server's data folders (HERALDBENCH_DATA_DIRS, default ./data).${folders}`, "ds-path-help"), field("Frequency threshold", fields.threshold, "Values seen fewer times share the missing-value row.", "ds-threshold-help")),
    h("div", { class: "form-actions" }, submitBtn),
    formResult,
  );

  const el = h(
    "section",
    {},
    pageHeader("Datasets", { subtitle: "Real traces (Criteo, Avazu, MovieLens) prepared for experiments. Synthetic traces (the criteo-kaggle workload profile, or a profile you fitted with heraldbench calibrate) need no preparation." }),
    h("div", { class: "datasets-layout" }, body, form),
  );

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const payload = { name: fields.name.value.trim(), kind: fields.kind.value, path: fields.path.value.trim() };
    if (fields.threshold.value !== "") payload.frequency_threshold = Number(fields.threshold.value);
    const missing = ["name", "path"].filter((k) => !payload[k]);
    for (const k of ["name", "path"]) fields[k].setAttribute("aria-invalid", missing.includes(k) ? "true" : "false");
    if (missing.length) {
      replace(formResult, alertBox("error", "Missing fields", h("p", {}, `Fill in: ${missing.join(", ")}.`)));
      fields[missing[0]].focus();
      return;
    }
    submitBtn.disabled = true;
    try {
      const accepted = await api.addDataset(payload);
      pending = accepted && accepted.id !== undefined ? accepted.id : null;
      replace(formResult, alertBox("success", "Queued", h("p", { "data-testid": "dataset-pending" }, `${payload.name} is being prepared.`)));
      form.reset();
      poll.poke();
    } catch (err) {
      for (const d of err.fieldErrors) {
        const key = String(d.field || "").split(".").pop();
        const input = fields[key === "frequency_threshold" ? "threshold" : key];
        if (input) input.setAttribute("aria-invalid", "true");
      }
      replace(formResult, apiErrorBox(err, "Could not add the dataset"));
    } finally {
      submitBtn.disabled = false;
    }
  });

  const use = (ds) => {
    const dataset = ds.spec && typeof ds.spec === "object" ? ds.spec : ds.prepared_path ? { kind: "prepared", path: ds.prepared_path } : { kind: ds.kind, path: ds.path };
    const spec = {
      name: String(ds.name || "dataset").replace(/[^A-Za-z0-9_.-]/g, "-"),
      mode: "simulate",
      dataset,
      cluster: { workers: 8, batch_size: 256 },
      cache: { ratio: 0.1, policy: "lru" },
      embedding_dim: 128,
      schedulers: [{ kind: "naive" }, { kind: "herald", lookahead: 1 }, { kind: "herald-sync-only" }, { kind: "herald-partition-only" }],
    };
    try {
      sessionStorage.setItem(DRAFT_KEY, toYaml(spec, `Herald's Table 1 on dataset ${ds.name}`));
    } catch {
      /* no storage */
    }
    navigate("#/new?from=draft");
  };

  // The "being prepared" notice of the last registration gives way to its outcome.
  let pending = null;
  const settle = (list) => {
    const ds = pending === null ? null : list.find((d) => d.id === pending);
    if (!ds || isActive(ds.status) || ds.status === "preparing") return;
    pending = null;
    replace(
      formResult,
      ds.status === "failed"
        ? alertBox("error", "Preparation failed", h("p", { "data-testid": "dataset-failed" }, `${ds.name}: ${ds.error || "failed"}`))
        : alertBox("success", "Prepared", h("p", {}, `${ds.name} is ready to use.`)),
    );
  };

  const load = async () => {
    let list;
    try {
      list = items(await api.datasets());
    } catch (err) {
      replace(body, h("div", { class: "pad" }, apiErrorBox(err, "Could not load the datasets")));
      return false;
    }
    settle(list);
    if (!list.length) {
      replace(body, emptyState("No datasets yet", "Add one with the form; until then, use the criteo-kaggle workload profile of any preset."));
      return false;
    }
    replace(
      body,
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "table", "data-testid": "datasets-table" },
          h("caption", { class: "visually-hidden" }, "Datasets"),
          h("thead", {}, h("tr", {}, ["Name", "Format", "Status", "Path", "Stats", ""].map((t) => h("th", { scope: "col" }, t)))),
          h(
            "tbody",
            {},
            list.map((ds) =>
              h(
                "tr",
                {},
                h("th", { scope: "row" }, ds.name),
                h("td", { class: "muted" }, ds.kind),
                h("td", {}, statusBadge(ds.status), ds.error ? h("div", { class: "run-error small" }, ds.error) : null),
                h("td", { class: "mono small" }, ds.prepared_path || ds.path),
                h("td", { class: "small" }, stats(ds.stats)),
                h("td", {}, ["succeeded", "ready", "finished"].includes(ds.status) ? h("button", { type: "button", class: "btn btn-secondary btn-small", onclick: () => use(ds) }, "Use in experiment") : null),
              ),
            ),
          ),
        ),
      ),
    );
    return list.some((d) => isActive(d.status) || d.status === "preparing");
  };
  const poll = poller(load, { fast: 2000, slow: null }).start();
  return { el, title: "Datasets", destroy: () => poll.stop() };
}

function field(label, input, help = null, helpId = null) {
  return h("div", { class: "field" }, h("label", { for: input.id }, label), input, help ? h("p", { class: "hint", id: helpId }, help) : null);
}

function stats(st) {
  if (!st || typeof st !== "object") return "—";
  const entries = Object.entries(st).filter(([, v]) => v === null || typeof v !== "object").slice(0, 5);
  if (!entries.length) return "—";
  return h("span", { class: "kv" }, entries.map(([k, v]) => h("span", {}, h("span", { class: "muted" }, `${k.replace(/_/g, " ")} `), isNum(v) ? fmtCompact(v) : fmtValue(v))));
}
