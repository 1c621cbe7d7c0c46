// #/studies and #/studies/:id: tuning studies, their trials and plots.

import { api, items } from "../api.js";
import { h, replace, isNum, fmtValue, timeEl } from "../dom.js";
import { scatterChart } from "../charts.js";
import { isActive } from "../results.js";
import { statusBadge, apiErrorBox, alertBox, emptyState, pageHeader, externalLink, statCard, poller } from "../ui.js";

const TRIAL_COLORS = { complete: "#2563eb", running: "#a16207", fail: "#dc2626", failed: "#dc2626", pruned: "#64748b", waiting: "#64748b" };

function directions(study) {
  const d = study.directions || study["direction(s)"] || study.direction;
  if (Array.isArray(d)) return d;
  return d ? [d] : [];
}

function trialValues(t) {
  if (Array.isArray(t.values)) return t.values;
  if (isNum(t.value)) return [t.value];
  return null;
}

export function studiesPage({ navigate, config }) {
  const body = h("div", { class: "card card-flush", "aria-live": "polite" }, h("p", { class: "loading pad" }, "Loading studies…"));
  const el = h(
    "section",
    {},
    pageHeader("Studies", {
      subtitle: "A study tunes scheduler knobs (for example lookahead or cache size) over many trials. Submit one from New experiment with a spec that has a tuning section.",
      actions: config.tuning_available === false ? [] : [h("a", { class: "btn btn-primary", href: "#/new" }, "New study")],
    }),
    config.tuning_available === false ? alertBox("info", "Tuning is not installed on this server", h("p", {}, "Existing studies are listed below, but new ones are refused until the tuning pipeline (heraldbench.pipelines.tune) is installed. Experiments work without it.")) : null,
    body,
  );
  const load = async () => {
    let list;
    try {
      list = items(await api.studies());
    } catch (err) {
      replace(body, h("div", { class: "pad" }, apiErrorBox(err, err.status === 404 ? "Studies are not available on this server" : "Could not load the studies")));
      return false;
    }
    if (!list.length) {
      replace(body, emptyState("No studies yet", "A study is a spec with a tuning section; it runs trials and keeps the best settings.", h("a", { class: "btn btn-primary", href: "#/new" }, "Write a study spec")));
      return false;
    }
    replace(
      body,
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "table", "data-testid": "studies-table" },
          h("caption", { class: "visually-hidden" }, "Studies"),
          h("thead", {}, h("tr", {}, ["ID", "Name", "Status", "Direction", "Trials", "Best", "Created"].map((t) => h("th", { scope: "col" }, t)))),
          h(
            "tbody",
            {},
            list.map((st) => {
              const href = `#/studies/${st.id}`;
              const best = Array.isArray(st.best) && st.best[0] ? st.best[0].values : null;
              const nTrials = Array.isArray(st.trials) ? st.trials.length : st.n_trials ?? st.trials_count ?? null;
              return h(
                "tr",
                { class: "row-link", onclick: (e) => !e.target.closest("a") && navigate(href) },
                h("td", { class: "num muted" }, `#${st.id}`),
                h("th", { scope: "row" }, h("a", { href, class: "strong-link" }, st.name || `study ${st.id}`)),
                h("td", {}, statusBadge(st.status)),
                h("td", { class: "muted" }, directions(st).join(", ") || "—"),
                h("td", { class: "num" }, nTrials === null ? "—" : fmtValue(nTrials)),
                h("td", { class: "num" }, best ? best.map((v) => fmtValue(v)).join(", ") : "—"),
                h("td", { class: "muted nowrap" }, st.created_at ? timeEl(st.created_at) : "—"),
              );
            }),
          ),
        ),
      ),
    );
    return list.some((s) => isActive(s.status));
  };
  const poll = poller(load, { fast: 2000, slow: 15000 }).start();
  return { el, title: "Studies", destroy: () => poll.stop() };
}

export function studyPage({ params }) {
  const id = params.id;
  const head = h("div", {}, pageHeader(`Study ${id}`, { crumbs: [["Studies", "#/studies"], [`#${id}`, null]] }));
  const body = h("div", {}, h("p", { class: "loading" }, "Loading…"));
  const el = h("section", { "data-testid": "study-page" }, head, body);
  let sig = "";
  const load = async () => {
    let st;
    try {
      st = await api.study(id);
    } catch (err) {
      replace(body, apiErrorBox(err, err.status === 404 ? `There is no study #${id}` : "Could not load the study"));
      return err.status !== 404;
    }
    const next = JSON.stringify(st);
    if (next !== sig) {
      sig = next;
      render(st);
    }
    return isActive(st.status);
  };
  const render = (st) => {
    const dirs = directions(st);
    replace(
      head,
      pageHeader(st.name || `Study ${id}`, {
        crumbs: [
          ["Studies", "#/studies"],
          [`#${id}`, null],
        ],
        badge: statusBadge(st.status),
        actions: [st.mlflow_url ? externalLink(st.mlflow_url, "Open in MLflow", { class: "btn btn-secondary external", "data-testid": "study-mlflow" }) : null].filter(Boolean),
        subtitle: dirs.length ? `Objective${dirs.length > 1 ? "s" : ""}: ${dirs.join(", ")}` : null,
      }),
    );
    const trials = Array.isArray(st.trials) ? st.trials : [];
    const complete = trials.filter((t) => String(t.state).toLowerCase() === "complete");
    const best = Array.isArray(st.best) ? st.best : [];
    const parts = [];
    if (st.error) parts.push(alertBox("error", "The study failed", h("pre", { class: "error-text" }, String(st.error))));
    parts.push(
      h(
        "div",
        { class: "stats" },
        statCard("Trials", String(trials.length), `${complete.length} complete`),
        best[0] ? statCard(dirs.length > 1 ? "Pareto-optimal" : "Best value", dirs.length > 1 ? `${best.length} trials` : fmtValue(best[0].values && best[0].values[0]), dirs[0] || "") : null,
        best[0] && dirs.length <= 1 ? statCard("Best parameters", h("span", { class: "param-list" }, Object.entries(best[0].params || {}).map(([k, v]) => h("code", {}, `${k}=${fmtValue(v)}`)))) : null,
      ),
    );
    const charts = [];
    if (complete.length) charts.push(h("div", { class: "card chart-card" }, historyChart(trials, dirs)));
    if (dirs.length === 2 && complete.length) charts.push(h("div", { class: "card chart-card" }, paretoChart(trials, best, dirs)));
    const plots = st.plots && typeof st.plots === "object" ? Object.entries(st.plots).filter(([, url]) => url) : [];
    for (const [name, url] of plots) {
      const sameOrigin = url.startsWith("/") && !url.startsWith("//");
      charts.push(
        h(
          "figure",
          { class: "card chart-card plot" },
          h("figcaption", { class: "chart-title" }, name.replace(/^./, (c) => c.toUpperCase())),
          sameOrigin && !/\.html?$/.test(url) ? h("img", { src: url, alt: `${name} plot of the study`, loading: "lazy", onerror: (e) => e.currentTarget.remove() }) : null,
          h("p", {}, externalLink(url, `Open the ${name} plot`)),
        ),
      );
    }
    if (charts.length) parts.push(h("section", { class: "charts", "aria-label": "Plots" }, charts));
    parts.push(trialsTable(trials, dirs, best, st.objectives || [], st.constraints || []));
    replace(body, ...parts);
  };
  const poll = poller(load, { fast: 2000, slow: null }).start();
  return { el, title: `Study ${id}`, destroy: () => poll.stop() };
}

function historyChart(trials, dirs) {
  const minimize = (dirs[0] || "minimize").toLowerCase().startsWith("min");
  const pts = [];
  const step = [];
  let best = null;
  for (const t of [...trials].sort((a, b) => a.number - b.number)) {
    const vals = trialValues(t);
    if (!vals || !isNum(vals[0])) continue;
    const v = vals[0];
    const state = String(t.state).toLowerCase();
    pts.push({ x: t.number, y: v, color: TRIAL_COLORS[state] || "#2563eb", label: `trial ${t.number}: ${v}\n${Object.entries(t.params || {}).map(([k, p]) => `${k}=${fmtValue(p)}`).join(", ")}` });
    if (best === null || (minimize ? v < best : v > best)) best = v;
    step.push([t.number, best]);
  }
  return scatterChart({
    title: "Optimisation history",
    description: `Objective value of each complete trial and the best so far (${minimize ? "lower" : "higher"} is better).`,
    points: pts,
    step,
    stepColor: "#0f766e",
    xLabel: "trial",
    yLabel: dirs.length > 1 ? "objective 1" : "objective",
    legend: [
      { color: "#2563eb", label: "trial", marker: "dot" },
      { color: "#0f766e", label: "best so far", marker: "line" },
    ],
  });
}

function paretoChart(trials, best, dirs) {
  const bestKeys = new Set(best.map((b) => JSON.stringify(b.params)));
  const pts = trials
    .map((t) => ({ t, v: trialValues(t) }))
    .filter(({ v }) => v && isNum(v[0]) && isNum(v[1]))
    .map(({ t, v }) => ({ x: v[0], y: v[1], color: bestKeys.has(JSON.stringify(t.params)) ? "#dc2626" : "#94a3b8", r: bestKeys.has(JSON.stringify(t.params)) ? 5.5 : 4, label: `trial ${t.number}: ${v.join(", ")}` }));
  return scatterChart({
    title: "Pareto front",
    description: "Each complete trial's two objectives; red points are Pareto-optimal.",
    points: pts,
    xLabel: `objective 1 (${dirs[0]})`,
    yLabel: `objective 2 (${dirs[1]})`,
    legend: [
      { color: "#dc2626", label: "Pareto-optimal", marker: "dot" },
      { color: "#94a3b8", label: "other trials", marker: "dot" },
    ],
  });
}

function trialsTable(trials, dirs, best, objectives = [], caps = []) {
  const paramNames = [...new Set(trials.flatMap((t) => Object.keys(t.params || {})))];
  const nValues = Math.max(dirs.length, ...trials.map((t) => (trialValues(t) || []).length), 1);
  const bestKeys = new Set(best.map((b) => JSON.stringify(b.params)));
  const tracked = trials.some((t) => t.mlflow_run_url);
  return h(
    "section",
    { class: "card section", "aria-labelledby": "trials-title" },
    h("div", { class: "section-head" }, h("h2", { id: "trials-title" }, "Trials"), caps.length ? h("p", { class: "hint", "data-testid": "study-caps" }, "Caps: ", caps.join("; "), " — a trial that breaks one is flagged and never best.") : null),
    trials.length
      ? h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            { class: "table", "data-testid": "trials-table" },
            h("caption", { class: "visually-hidden" }, "Trials of the study"),
            h("thead", {}, h("tr", {}, h("th", { scope: "col", class: "num" }, "#"), h("th", { scope: "col" }, "State"), paramNames.map((p) => h("th", { scope: "col" }, p)), Array.from({ length: nValues }, (_, i) => h("th", { scope: "col", class: "num" }, objectives[i] ? `${objectives[i]} (${dirs[i] || "minimize"})` : nValues > 1 ? `value ${i + 1}` : "value")), tracked ? h("th", { scope: "col" }, "MLflow") : null)),
            h(
              "tbody",
              {},
              [...trials]
                .sort((a, b) => a.number - b.number)
                .map((t) => {
                  const vals = trialValues(t) || [];
                  const isBest = bestKeys.has(JSON.stringify(t.params)) && vals.length;
                  return h(
                    "tr",
                    { class: isBest ? "row-best" : null },
                    h("td", { class: "num" }, String(t.number), isBest ? h("span", { class: "tag tag-best" }, "best") : null),
                    h("td", {}, statusBadge(String(t.state).toLowerCase()), t.feasible === false ? h("span", { class: "tag tag-warn", "data-testid": "breaks-cap", title: "This trial breaks a cap of the study" }, "breaks cap") : null),
                    paramNames.map((p) => h("td", { class: "mono" }, t.params && p in t.params ? fmtValue(t.params[p]) : "—")),
                    Array.from({ length: nValues }, (_, i) => h("td", { class: "num" }, isNum(vals[i]) ? fmtValue(vals[i]) : "—")),
                    tracked ? h("td", {}, t.mlflow_run_url ? externalLink(t.mlflow_run_url, "Run", { "data-testid": "trial-mlflow", "aria-label": `Trial ${t.number} in MLflow` }) : "—") : null,
                  );
                }),
            ),
          ),
        )
      : h("p", { class: "muted pad" }, "No trials yet."),
  );
}
