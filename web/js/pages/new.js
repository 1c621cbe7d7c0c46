// #/new: presets, the spec editor with validation, and submission.

import { api } from "../api.js";
import { h, replace, clear, fmtValue } from "../dom.js";
import { createEditor, parseSpecText, toYaml, toJson, looksLikeJson, locatePath } from "../editor.js";
import { SCHEDULER_INFO, colorMap } from "../results.js";
import { apiErrorBox, alertBox, pageHeader, chip, segmented } from "../ui.js";
import { DRAFT_KEY } from "./experiment.js";

const SAVED_KEY = "heraldbench.editor";

function storage(kind) {
  try {
    return kind === "session" ? sessionStorage : localStorage;
  } catch {
    return null;
  }
}

export function newExperimentPage({ query, config, navigate }) {
  const state = { presets: [], selected: null, busy: false };
  const presetList = h("div", { class: "presets", role: "group", "aria-label": "Presets" }, h("p", { class: "loading" }, "Loading presets…"));
  const result = h("div", { class: "validation", id: "validation-result", "aria-live": "polite", "data-testid": "validation-result" });
  const submitStatus = h("div", { "aria-live": "assertive" });

  const editor = createEditor({
    id: "spec-editor",
    describedBy: "editor-help",
    onChange: (text) => {
      storage("local")?.setItem(SAVED_KEY, text);
      format = looksLikeJson(text) ? "json" : "yaml";
    },
    onSubmit: () => submit(),
  });
  let format = "yaml";

  const validateBtn = h("button", { type: "button", class: "btn btn-secondary", "data-testid": "validate", onclick: () => validate() }, "Validate");
  const submitBtn = h("button", { type: "button", class: "btn btn-primary", "data-testid": "submit", onclick: () => submit() }, "Submit experiment");

  const formatControl = h("div", {});
  const renderFormat = () =>
    replace(
      formatControl,
      segmented(
        "Spec format",
        [
          ["yaml", "YAML"],
          ["json", "JSON"],
        ],
        format,
        (v) => convert(v),
      ),
    );

  const kinds = Object.keys(config.schedulers || {}).length ? Object.keys(config.schedulers) : Object.keys(SCHEDULER_INFO);
  const addSelect = h("select", { id: "add-scheduler", "aria-label": "Scheduler to add" }, kinds.map((k) => h("option", { value: k }, k)));
  const addBtn = h("button", { type: "button", class: "btn btn-ghost btn-small", onclick: () => addScheduler(addSelect.value) }, "Add");

  const el = h(
    "section",
    { class: "new-experiment" },
    pageHeader("New experiment", {
      crumbs: [
        ["Experiments", "#/experiments"],
        ["New", null],
      ],
      subtitle: "Pick a preset or write a spec, check it with Validate, then submit. The experiment runs every scheduler on the same trace and compares their traffic with naive's.",
    }),
    h("h2", { class: "step" }, h("span", { class: "step-num", "aria-hidden": "true" }, "1"), "Start from a preset"),
    presetList,
    h("h2", { class: "step" }, h("span", { class: "step-num", "aria-hidden": "true" }, "2"), h("label", { for: "spec-editor" }, "Edit the spec")),
    h(
      "div",
      { class: "editor-layout" },
      h(
        "div",
        { class: "card editor-card" },
        h("div", { class: "editor-toolbar" }, formatControl, h("div", { class: "toolbar-group" }, h("label", { for: "add-scheduler", class: "toolbar-label" }, "Add scheduler"), addSelect, addBtn)),
        editor.el,
        h("p", { class: "hint", id: "editor-help" }, "YAML or JSON. Lists of values (e.g. ", h("code", {}, "cache: {ratio: [0.05, 0.1]}"), ") make a grid of runs. ", h("kbd", {}, "Ctrl"), "+", h("kbd", {}, "Enter"), " submits."),
        h("div", { class: "editor-actions" }, validateBtn, submitBtn, submitStatus),
        result,
      ),
      reference(config),
    ),
  );

  // ---------------------------------------------------------------- actions

  const parse = () => {
    const parsed = parseSpecText(editor.value);
    if (!parsed.ok) {
      editor.mark([{ line: parsed.line, message: parsed.message }]);
      replace(result, alertBox("error", "The spec cannot be read", h("p", {}, parsed.message)));
    }
    return parsed;
  };

  const showErrors = (err, title) => {
    const list = err.fieldErrors;
    if (!list.length) {
      replace(result, apiErrorBox(err, title));
      return;
    }
    const text = editor.value;
    const marks = [];
    const items = list.map((e) => {
      const field = e.field || e.loc || "(spec)";
      const where = locatePath(text, String(field));
      if (where) marks.push({ line: where.line, message: `${field}: ${e.message}` });
      const got = e.value !== undefined && e.value !== null && e.value !== "" ? h("span", { class: "got" }, "got ", h("code", {}, fmtValue(e.value))) : null;
      const content = [h("code", { class: "field-path", "data-testid": "error-field" }, String(field)), h("span", { class: "error-msg" }, e.message || ""), got];
      return h(
        "li",
        { class: "error-item" },
        where
          ? h("button", { type: "button", class: "error-jump", title: `Go to line ${where.line + 1}`, onclick: () => editor.select(where.start, where.end) }, ...content, h("span", { class: "error-line" }, `line ${where.line + 1}`))
          : h("div", { class: "error-jump static" }, ...content),
      );
    });
    editor.mark(marks);
    replace(
      result,
      h(
        "div",
        { class: "alert alert-error", role: "alert", "data-testid": "validation-errors" },
        h("strong", { class: "alert-title" }, `${list.length} problem${list.length === 1 ? "" : "s"} in the spec`),
        h("ul", { class: "error-items" }, items),
      ),
    );
  };

  const setBusy = (busy, what) => {
    state.busy = busy;
    validateBtn.disabled = busy;
    submitBtn.disabled = busy;
    replace(submitStatus, busy ? h("span", { class: "spinner-text" }, h("span", { class: "spinner", "aria-hidden": "true" }), what) : "");
  };

  const validate = async () => {
    if (state.busy) return;
    const parsed = parse();
    if (!parsed.ok) return;
    setBusy(true, "Validating…");
    try {
      const res = await api.validate(parsed.value);
      editor.mark([]);
      const runs = res.runs ?? 1;
      const axes = Object.entries(res.axes || {});
      const schedAxes = res.scheduler_axes || [];
      const seeds = Array.isArray(res.seeds) ? res.seeds : [];
      const gridParts = [
        ...axes.map(([name, values]) => `${name} × ${values.length} (${values.map((v) => fmtValue(v)).join(", ")})`),
        ...schedAxes.map((name) => `${name} (scheduler knob)`),
        seeds.length > 1 ? `${seeds.length} seeds` : null,
      ].filter(Boolean);
      replace(
        result,
        h(
          "div",
          { class: "alert alert-success", role: "status", "data-testid": "validation-ok" },
          h("strong", { class: "alert-title" }, `✓ Valid — ${runs} run${runs === 1 ? "" : "s"}`),
          h("p", {}, `Every field checks out. The spec${gridParts.length ? " of the first grid point" : ""}, with the defaults the server will use, is below.`),
          gridParts.length ? h("p", {}, h("strong", {}, "Grid: "), gridParts.join("; ")) : null,
          res.spec ? h("details", {}, h("summary", {}, "Show the spec with defaults"), h("pre", { class: "code" }, toYaml(res.spec))) : null,
        ),
      );
    } catch (err) {
      showErrors(err, "Validation failed");
    } finally {
      setBusy(false);
    }
  };

  const submit = async () => {
    if (state.busy) return;
    const parsed = parse();
    if (!parsed.ok) return;
    const study = parsed.value && typeof parsed.value.tuning === "object" && parsed.value.tuning !== null;
    setBusy(true, "Submitting…");
    try {
      const res = study ? await api.submitStudy(parsed.value) : await api.submit(parsed.value);
      storage("local")?.setItem(SAVED_KEY, editor.value);
      navigate(study ? `#/studies/${res.id}` : `#/experiments/${res.id}`);
    } catch (err) {
      showErrors(err, "Submission failed");
    } finally {
      setBusy(false);
    }
  };

  const convert = (to) => {
    const parsed = parse();
    if (!parsed.ok) {
      renderFormat();
      return;
    }
    format = to;
    editor.setValue(to === "json" ? toJson(parsed.value) : toYaml(parsed.value));
    renderFormat();
  };

  const addScheduler = (kind) => {
    const parsed = parse();
    if (!parsed.ok) return;
    const doc = parsed.value;
    const knobs = (config.schedulers || {})[kind] || {};
    const entry = { kind };
    for (const [k, v] of Object.entries(knobs)) if (v !== null && v !== undefined && typeof v !== "object" && k !== "label") entry[k] = v;
    doc.schedulers = Array.isArray(doc.schedulers) ? [...doc.schedulers, entry] : [entry];
    editor.setValue(format === "json" ? toJson(doc) : toYaml(doc));
    replace(result, alertBox("info", null, `Added ${kind} with its default knobs; edit them in the spec.`));
  };

  const loadPreset = (preset) => {
    state.selected = preset.id;
    format = "yaml";
    editor.setValue(toYaml(preset.spec, `${preset.title}\n${preset.description || ""}`.trim()));
    clear(result);
    renderPresets();
    renderFormat();
  };

  const renderPresets = () => {
    if (!state.presets.length) {
      replace(presetList, h("p", { class: "muted" }, "No presets on this server; write a spec below."));
      return;
    }
    replace(
      presetList,
      state.presets.map((p) => {
        const spec = p.spec || {};
        const scheds = Array.isArray(spec.schedulers) ? spec.schedulers.map((x) => (x && x.kind) || "?") : [];
        const colors = colorMap(scheds.map((k) => ({ label: k, kind: k })));
        const ds = spec.dataset || {};
        return h(
          "button",
          {
            type: "button",
            class: "preset",
            "aria-pressed": state.selected === p.id ? "true" : "false",
            "data-testid": `preset-${p.id}`,
            "data-preset": p.id,
            onclick: () => loadPreset(p),
          },
          h("span", { class: "preset-title" }, p.title || p.id),
          h("span", { class: "preset-desc" }, p.description || ""),
          h("span", { class: "chips" }, [...new Set(scheds)].map((k) => chip(k, { color: colors.get(k) }))),
          h("span", { class: "preset-meta" }, [ds.kind, spec.cluster && spec.cluster.workers ? `${spec.cluster.workers} workers` : null, spec.mode && spec.mode !== "simulate" ? spec.mode : null].filter(Boolean).join(" · ")),
        );
      }),
    );
  };

  // ---------------------------------------------------------------- initial content

  (async () => {
    try {
      state.presets = (await api.presets()) || [];
    } catch (err) {
      replace(presetList, apiErrorBox(err, "Could not load the presets"));
      state.presets = [];
    }
    if (state.presets.length || !presetList.querySelector(".alert")) renderPresets();
    const wanted = query.get("preset");
    const draft = query.get("from") === "draft" ? storage("session")?.getItem(DRAFT_KEY) : null;
    const saved = storage("local")?.getItem(SAVED_KEY);
    const preset = state.presets.find((p) => p.id === wanted);
    if (preset) loadPreset(preset);
    else if (draft) editor.setValue(draft);
    else if (saved && saved.trim()) editor.setValue(saved);
    else if (state.presets.length) loadPreset(state.presets.find((p) => p.id === "herald-table1") || state.presets[0]);
    format = looksLikeJson(editor.value) ? "json" : "yaml";
    renderFormat();
  })();
  renderFormat();

  return { el, title: "New experiment" };
}

function reference(config) {
  const schedulers = config.schedulers && Object.keys(config.schedulers).length ? config.schedulers : Object.fromEntries(Object.keys(SCHEDULER_INFO).map((k) => [k, {}]));
  return h(
    "aside",
    { class: "card reference", "aria-labelledby": "ref-title" },
    h("h2", { id: "ref-title" }, "Spec reference"),
    h(
      "dl",
      { class: "ref-fields" },
      refField("name", "letters, digits, _ . -"),
      refField("mode", "simulate (count traffic) or train (also train a DLRM and report AUC)"),
      refField("dataset", "{kind: synthetic, profile: criteo-kaggle (or a profile file under the data folder), samples, scale, seed}, {kind: synthetic-criteo, ...} (independent fields), or criteo-tsv / avazu-csv / movielens / prepared with a path under the data folder"),
      refField("cluster", "{workers: 8, batch_size: 256} — batch_size is per worker"),
      refField("cache", "exactly one of ratio (share of rows), rows or bytes ('1.6GiB'); policy lru | lfu"),
      refField("embedding_dim", "128 — bytes = rows × dim × 4"),
      refField("consistency", "strict (default) or optimistic (Herald's simulator)"),
      refField("seeds", "[0, 1, …] repeats every run per seed"),
      refField("tuning", "makes the spec a study (Optuna): {space: {scheduler.lookahead: {low, high, log}, cache.ratio: {…}}, objectives: [traffic | time | cache_memory | auc | logloss], constraints: [{metric: cache_memory, max: 128MiB}], trials, sampler: {kind: tpe | random | nsga2, seed}}; submitting starts the study (see examples/tune.yaml)"),
    ),
    h("h3", {}, "Schedulers"),
    h(
      "ul",
      { class: "ref-scheds" },
      Object.entries(schedulers).map(([kind, knobs]) =>
        h(
          "li",
          {},
          h("code", { class: "kind" }, kind),
          SCHEDULER_INFO[kind] ? h("span", { class: "muted" }, ` — ${SCHEDULER_INFO[kind]}`) : null,
          knobs && Object.keys(knobs).length ? h("div", { class: "knobs" }, Object.entries(knobs).map(([k, v]) => h("code", {}, `${k}: ${v === null ? "—" : fmtValue(v)}`))) : null,
        ),
      ),
    ),
    config.training_available === false ? h("p", { class: "muted small" }, h("strong", {}, "mode: train"), " is not available on this server (no trainer installed); use simulate.") : null,
    config.tuning_available === false ? h("p", { class: "muted small" }, "A ", h("code", {}, "tuning"), " section makes a study; this server has no tuning pipeline, so studies are refused.") : null,
    config.profiles && config.profiles.length ? h("p", { class: "muted small" }, "Hardware profiles for modelled time: ", config.profiles.join(", "), ".") : null,
  );
}

function refField(name, text) {
  return h("div", {}, h("dt", {}, h("code", {}, name)), h("dd", {}, text));
}
