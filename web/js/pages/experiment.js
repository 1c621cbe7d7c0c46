// #/experiments/:id: status, progress, the comparison table and the charts of one experiment.

import { api } from "../api.js";
import { h, replace, clear, isNum, fmtInt, fmtCompact, fmtFixed, fmtBytes, fmtSeconds, fmtValue, timeEl } from "../dom.js";
import { groupedBarChart, lineChart, seriesPoints } from "../charts.js";
import { toYaml } from "../editor.js";
import {
  METRICS,
  METRIC_COLORS,
  METRIC_HELP,
  PUBLISHED_HERALD,
  SCHEDULER_INFO,
  colorMap,
  groupRuns,
  isActive,
  isBaseline,
  isPublishedHerald,
  profilesOf,
  timeFor,
} from "../results.js";
import { hasSideBySide, sideCells, sideHeads } from "../sidebyside.js";
import { statusBadge, progressBar, apiErrorBox, alertBox, pageHeader, externalLink, statCard, selectField, segmented, poller, infoTip } from "../ui.js";

export const DRAFT_KEY = "heraldbench.draft";

export function experimentPage({ params, config, navigate }) {
  const id = params.id;
  const state = { data: null, group: null, groupChosen: false, profile: null, open: new Set(), sig: "", headSig: "" };
  const head = h("div", {});
  const live = h("div", { class: "live-region" });
  const results = h("div", {});
  const el = h("section", { class: "experiment", "data-testid": "experiment-page" }, head, live, results);

  const renderHead = (d) => {
    const sig = JSON.stringify([d.status, d.name, d.mlflow_url]);
    if (sig === state.headSig) return;
    state.headSig = sig;
    const actions = [];
    if (isActive(d.status)) {
      actions.push(h("button", { type: "button", class: "btn btn-danger", "data-testid": "cancel", onclick: () => cancel() }, "Cancel experiment"));
    }
    actions.push(
      h(
        "button",
        {
          type: "button",
          class: "btn btn-secondary",
          title: "Open this experiment's spec in the editor",
          onclick: () => {
            try {
              sessionStorage.setItem(DRAFT_KEY, toYaml(d.spec || {}, `Copied from experiment #${d.id} (${d.name})`));
            } catch {
              /* no storage */
            }
            navigate("#/new?from=draft");
          },
        },
        "Edit as new",
      ),
    );
    if (d.mlflow_url) actions.push(externalLink(d.mlflow_url, "Open in MLflow", { class: "btn btn-secondary external", "data-testid": "experiment-mlflow" }));
    // results.json, and per point and seed the report: markdown, comparison.csv and charts.
    actions.push(h("a", { class: "btn btn-secondary", href: `/api/experiments/${id}/archive`, download: "", title: "results.json, comparison CSV and the report (markdown and PNG charts), as one zip", "data-testid": "experiment-download" }, "Download results"));
    replace(
      head,
      pageHeader(d.name || `Experiment ${id}`, {
        crumbs: [
          ["Experiments", "#/experiments"],
          [`#${id}`, null],
        ],
        badge: statusBadge(d.status, { "data-testid": "experiment-status" }),
        actions,
      }),
    );
  };

  const renderLive = (d) => {
    const p = d.progress || { done: 0, total: (d.runs || []).length };
    const spec = d.spec || {};
    const ds = spec.dataset || {};
    const facts = [
      ["Mode", d.mode || spec.mode || "simulate"],
      ["Dataset", [ds.kind, isNum(ds.samples) ? `${fmtCompact(ds.samples)} samples` : null, ds.scale !== undefined ? `scale ${fmtValue(ds.scale)}` : null, ds.path || null].filter(Boolean).join(" · ") || "—"],
      ["Cluster", spec.cluster ? `${fmtValue(spec.cluster.workers ?? 8)} workers × ${fmtValue(spec.cluster.batch_size ?? 256)} samples` : "8 workers × 256 samples"],
      ["Cache", spec.cache ? Object.entries(spec.cache).map(([k, v]) => `${k} ${fmtValue(v)}`).join(" · ") : "ratio 0.1"],
      ["Created", timeEl(d.created_at)],
      ["Updated", timeEl(d.updated_at)],
    ];
    replace(
      live,
      h("div", { class: "card status-card" }, progressBar(p.done || 0, p.total || 0, { status: d.status, label: "Experiment progress" }), h("dl", { class: "facts" }, facts.map(([k, v]) => h("div", {}, h("dt", {}, k), h("dd", {}, v))))),
      d.tracking_error ? alertBox("warn", "MLflow logging failed", h("p", {}, String(d.tracking_error), " The results below are unaffected.")) : null,
      d.error ? alertBox(d.status === "failed" ? "error" : "warn", d.status === "failed" ? "The experiment failed" : "Note", h("pre", { class: "error-text" }, String(d.error))) : null,
    );
  };

  const renderResults = (d) => {
    const sig = JSON.stringify([d.runs, d.status]);
    if (sig === state.sig) return;
    state.sig = sig;
    const groups = groupRuns(d.runs || []);
    clear(results);
    if (!groups.length) {
      results.append(h("div", { class: "card pad muted" }, isActive(d.status) ? "Waiting for the first run to start…" : "This experiment has no runs."));
      return;
    }
    if (!state.groupChosen || !groups.some((g) => g.key === state.group)) {
      const withResults = groups.find((g) => g.rows.some((r) => r.relative && isNum(r.relative.overall)));
      state.group = (withResults || groups[0]).key;
    }
    const profiles = profilesOf(groups);
    const defaultProfile = (config.profiles || []).find((p) => profiles.includes(p)) || profiles[0] || null;
    if (!state.profile || !profiles.includes(state.profile)) state.profile = defaultProfile;
    const group = groups.find((g) => g.key === state.group);
    const colors = colorMap(groups.flatMap((g) => g.rows.map((r) => ({ label: r.label, kind: r.kind }))));

    results.append(summaryCards(group, d));
    if (groups.length > 1) results.append(gridOverview(groups, state, () => renderAgain()));
    results.append(comparison(group, groups, profiles, colors));
    results.append(chartsSection(group, colors, state));
    results.append(specSection(d));
  };

  const renderAgain = () => {
    state.sig = "";
    if (state.data) renderResults(state.data);
  };

  const comparison = (group, groups, profiles, colors) => {
    const controls = h("div", { class: "controls" });
    if (groups.length > 1) {
      controls.append(
        selectField(
          "Grid point",
          groups.map((g) => [g.key, g.title]),
          state.group,
          (v) => {
            state.group = v;
            state.groupChosen = true;
            renderAgain();
          },
          { id: "group-select" },
        ),
      );
    }
    if (profiles.length) {
      controls.append(
        selectField(
          "Hardware profile",
          profiles.map((p) => [p, p]),
          state.profile,
          (v) => {
            state.profile = v;
            renderAgain();
          },
          { id: "profile-select" },
        ),
      );
    }
    return h(
      "section",
      { class: "card section", "aria-labelledby": "cmp-title" },
      h(
        "div",
        { class: "section-head" },
        h("div", {}, h("h2", { id: "cmp-title" }, "Comparison"), h("p", { class: "section-note" }, "Embedding rows moved between the workers' caches and the parameter server, divided by naive's on the same trace. ", h("strong", {}, "Lower is better"), "; naive is 1.00 by definition.")),
        controls,
      ),
      comparisonTable(group, colors, state),
    );
  };

  const load = async () => {
    let d;
    try {
      d = await api.experiment(id);
    } catch (err) {
      if (!state.data) {
        replace(head, pageHeader(`Experiment ${id}`, { crumbs: [["Experiments", "#/experiments"], [`#${id}`, null]] }));
        replace(live, apiErrorBox(err, err.status === 404 ? `There is no experiment #${id}` : "Could not load the experiment"));
        return err.status !== 404;
      }
      throw err;
    }
    state.data = d;
    state.baseline = (d.spec && typeof d.spec.baseline === "string" && d.spec.baseline) || "naive";
    renderHead(d);
    renderLive(d);
    renderResults(d);
    document.title = `${d.name} · heraldbench`;
    return isActive(d.status);
  };

  const cancel = async () => {
    if (!window.confirm("Cancel this experiment? Queued and running runs are stopped; finished runs are kept.")) return;
    try {
      await api.cancel(id);
    } catch (err) {
      live.prepend(apiErrorBox(err, "Could not cancel the experiment"));
      return;
    }
    state.headSig = "";
    poll.poke();
  };

  replace(head, pageHeader(`Experiment ${id}`, { crumbs: [["Experiments", "#/experiments"], [`#${id}`, null]] }));
  replace(live, h("p", { class: "loading" }, "Loading…"));
  const poll = poller(load, { fast: 2000, slow: null }).start();
  return { el, title: `Experiment ${id}`, destroy: () => poll.stop() };
}

// ------------------------------------------------------------------ summary

function summaryCards(group, d) {
  const rows = group.rows;
  const done = (d.runs || []).filter((r) => ["succeeded", "finished"].includes(r.status)).length;
  const failed = (d.runs || []).filter((r) => r.status === "failed").length;
  const others = rows.filter((r) => !isBaseline(r) && r.relative && isNum(r.relative.overall));
  const best = others.sort((a, b) => a.relative.overall - b.relative.overall)[0];
  const herald = rows.find((r) => isPublishedHerald(r) && r.relative && isNum(r.relative.overall));
  const naive = rows.find(isBaseline);
  const cards = [
    statCard("Runs", `${done} / ${(d.runs || []).length}`, failed ? `${failed} failed` : d.status === "succeeded" ? "all succeeded" : d.status),
    best ? statCard("Least traffic", h("span", {}, `${best.relative.overall.toFixed(2)}×`), `${best.label} · overall vs naive`, { "data-testid": "best-card" }) : null,
    herald
      ? statCard(
          "Herald overall",
          `${herald.relative.overall.toFixed(2)}×`,
          `paper: ${PUBLISHED_HERALD.overall.toFixed(2)}× (pull ${PUBLISHED_HERALD.pull}, push ${PUBLISHED_HERALD.push})`,
        )
      : null,
    naive && naive.totals ? statCard("Naive traffic", fmtCompact(naive.totals.overall), "rows pulled + pushed (the baseline)") : null,
  ].filter(Boolean);
  return h("div", { class: "stats" }, cards);
}

// ------------------------------------------------------------------ comparison table

function relCell(v, best) {
  if (!isNum(v)) return h("td", { class: "num muted" }, "—");
  const width = Math.max(2, Math.min(100, (v / 1.25) * 100));
  return h(
    "td",
    { class: ["num", "rel", best ? "rel-best" : null], "data-value": v.toFixed(6) },
    h("span", { class: "rel-bar", style: { width: `${width}%` }, "aria-hidden": "true" }),
    h("span", { class: "rel-text" }, v.toFixed(3)),
  );
}

function comparisonTable(group, colors, state) {
  const rows = group.rows;
  const naive = rows.find(isBaseline);
  const hasBound = rows.some((r) => r.bound && r.bound.gap);
  // FAE's and BagPipe's replicated rows travel by all-reduce: their "overall" includes it.
  const hasAllreduce = rows.some((r) => r.totals && isNum(r.totals.allreduce) && r.totals.allreduce > 0);
  const hasTime = Boolean(state.profile) && rows.some((r) => r.time && r.time[state.profile]);
  const metricNames = ["auc", "logloss", "accuracy"].filter((m) => rows.some((r) => r.metrics && isNum(r.metrics[m])));
  const hasSide = hasSideBySide(rows); // placements beside the schedulers (sidebyside.js)
  const lowest = {};
  for (const m of METRICS) {
    const vals = rows.filter((r) => !isBaseline(r) && r.relative && isNum(r.relative[m])).map((r) => r.relative[m]);
    lowest[m] = vals.length ? Math.min(...vals) : null;
  }
  // Two header rows: "× naive" and "rows moved" group their pull / push / overall columns.
  const span2 = { rowspan: "2" };
  const top = [
    h("th", { scope: "col", class: "col-toggle", ...span2 }, h("span", { class: "visually-hidden" }, "Details")),
    h("th", { scope: "col", ...span2 }, "Scheduler"),
    h("th", { scope: "colgroup", colspan: "3", class: "group-head" }, "relative to naive", infoTip("Rows moved by this scheduler ÷ rows moved by naive on the same trace. Lower is better.")),
    h("th", { scope: "colgroup", colspan: hasAllreduce ? "4" : "3", class: "group-head" }, "rows moved"),
    hasBound ? h("th", { scope: "col", class: "num", ...span2 }, "gap to bound", infoTip("How far the run's traffic is from the lower bound for its partition (1.00× = optimal). HET, FAE and BagPipe are outside the bound's premise and report none.")) : null,
    hasTime ? h("th", { scope: "col", class: "num", ...span2 }, "modelled time", infoTip(`Compute + communication per iteration under the ${state.profile} profile, and the speedup over naive (naive's modelled time ÷ this run's).`)) : null,
    ...metricNames.map((m) => h("th", { scope: "col", class: "num", ...span2 }, m === "auc" ? "AUC" : m === "logloss" ? "log loss" : "accuracy")),
    ...(hasSide ? sideHeads(state.profile, state.baseline) : []),
  ].filter(Boolean);
  const sub = [
    ...METRICS.map((m) => h("th", { scope: "col", class: "num sub-head" }, h("span", { class: "visually-hidden" }, "relative "), `${m} ×`, infoTip(`${METRIC_HELP[m]} Divided by naive's.`))),
    ...METRICS.map((m) => h("th", { scope: "col", class: "num sub-head" }, m, h("span", { class: "visually-hidden" }, " rows"))),
    hasAllreduce ? h("th", { scope: "col", class: "num sub-head", "data-testid": "allreduce-head" }, "all-reduce", infoTip("Row transfers per worker of the all-reduce that keeps replicated rows in sync (FAE's hot rows, BagPipe's shared rows), ring factor 2(W−1)/W; part of overall.")) : null,
  ].filter(Boolean);
  const headers = top;
  const ncols = top.reduce((n, th) => n + Number(th.getAttribute("colspan") || 1), 0);
  const body = [];
  for (const row of rows) {
    const open = state.open.has(row.label);
    const detailsId = `details-${group.key}-${row.label}`.replace(/[^\w-]/g, "_");
    const t = row.totals || {};
    const gap = row.bound && row.bound.gap;
    const time = hasTime ? timeFor(row, naive, state.profile) : null;
    const toggle = h(
      "button",
      {
        type: "button",
        class: "row-toggle",
        "aria-expanded": open ? "true" : "false",
        "aria-controls": detailsId,
        "aria-label": `Details of ${row.label}`,
        onclick: (e) => {
          if (state.open.has(row.label)) state.open.delete(row.label);
          else state.open.add(row.label);
          const btn = e.currentTarget;
          const expanded = state.open.has(row.label);
          btn.setAttribute("aria-expanded", expanded ? "true" : "false");
          const detailRow = document.getElementById(detailsId);
          if (detailRow) detailRow.hidden = !expanded;
        },
      },
      h("span", { "aria-hidden": "true" }, "▸"),
    );
    body.push(
      h(
        "tr",
        { "data-scheduler": row.label, "data-kind": row.kind, "data-status": row.status, class: row.status === "failed" ? "row-failed" : null },
        h("td", { class: "col-toggle" }, toggle),
        h("th", { scope: "row", class: "sched" }, h("span", { class: "sched-dot", style: { background: colors.get(row.label) }, "aria-hidden": "true" }), h("span", { class: "sched-label", title: SCHEDULER_INFO[row.kind] || null }, row.label), isBaseline(row) ? h("span", { class: "tag" }, "baseline") : null, ["succeeded", "finished"].includes(row.status) ? null : statusBadge(row.status, { class: ["badge", `badge-${row.status}`, "badge-inline"] }), row.stage ? h("span", { class: "run-progress run-stage", "data-testid": "run-stage", title: "Done once per machine, before the run's samples" }, row.stage) : row.progress !== null && row.progress !== undefined ? h("span", { class: "run-progress", "data-testid": "run-progress", title: "Samples done in this run" }, `${Math.round(100 * row.progress)}%`) : null, row.mlflow ? h("a", { href: row.mlflow, target: "_blank", rel: "noopener noreferrer", class: "run-link", title: `Open ${row.label}'s run in MLflow`, "aria-label": `${row.label} run in MLflow (opens in a new tab)`, "data-testid": "run-mlflow" }, "↗") : null),
        ...METRICS.map((m) => relCell(row.relative ? row.relative[m] : null, row.relative && lowest[m] !== null && row.relative[m] === lowest[m] && !isBaseline(row))),
        h("td", { class: "num", title: `${fmtInt(t.pull)} rows` }, fmtCompact(t.pull)),
        h("td", { class: "num", title: `${fmtInt(t.push)} rows` }, fmtCompact(t.push)),
        h("td", { class: "num", title: `${fmtInt(t.overall)} rows` }, fmtCompact(t.overall)),
        hasAllreduce ? h("td", { class: "num", "data-testid": "allreduce-cell", title: `${fmtInt(t.allreduce)} row transfers` }, fmtCompact(t.allreduce)) : null,
        hasBound ? h("td", { class: "num", title: gap ? `pull ${fmtFixed(gap.pull, 3)}× · push ${fmtFixed(gap.push, 3)}×` : "no bound for this scheduler" }, gap && isNum(gap.overall) ? `${gap.overall.toFixed(2)}×` : gap && isNum(gap.pull) ? `${gap.pull.toFixed(2)}× (pull)` : "—") : null,
        hasTime
          ? h(
              "td",
              { class: "num time-cell" },
              isNum(time.ms) ? `${time.ms.toFixed(time.ms < 1 ? 3 : 2)} ms` : "—",
              isNum(time.speedup) && !isBaseline(row) ? h("span", { class: ["speedup", time.speedup > 1.0005 ? "speedup-up" : null] }, `${time.speedup.toFixed(2)}× speedup`) : null,
            )
          : null,
        ...metricNames.map((m) => h("td", { class: "num" }, row.metrics && isNum(row.metrics[m]) ? row.metrics[m].toFixed(4) : "—")),
        ...(hasSide ? sideCells(row, state.profile) : []),
      ),
    );
    if (row.error) {
      const cancelled = row.status === "cancelled";
      body.push(h("tr", { class: ["row-error", cancelled ? "row-error-muted" : null] }, h("td", {}), h("td", { colspan: String(ncols - 1) }, h("div", { class: "run-error", role: "note" }, h("strong", {}, `${row.label} ${cancelled ? "was cancelled" : "failed"}: `), h("code", {}, row.error)))));
    }
    body.push(h("tr", { class: "row-details", id: detailsId, hidden: !open }, h("td", {}), h("td", { colspan: String(ncols - 1) }, runDetails(row))));
  }
  return h(
    "div",
    { class: "table-wrap" },
    h("table", { class: "table comparison", "data-testid": "comparison-table" }, h("caption", { class: "visually-hidden" }, `Comparison of schedulers${group.title !== "all runs" ? ` at ${group.title}` : ""}, relative to naive`), h("thead", {}, h("tr", {}, headers), h("tr", {}, sub)), h("tbody", {}, body)),
  );
}

function runDetails(row) {
  const main = row.main || {};
  const c = main.counts || {};
  const pairs = [
    ["miss pulls", fmtInt(c.miss_pull)],
    ["update pulls", fmtInt(c.update_pull)],
    ["evict pushes", fmtInt(c.evict_push)],
    ["update pushes", fmtInt(c.update_push)],
    ["flush pushes", fmtInt(c.flush_push)],
    ["hits", fmtInt(c.hits)],
    ["lookups", fmtInt(c.lookups)],
    ["accesses", fmtInt(c.accesses)],
    isNum(c.allreduce) && c.allreduce ? ["all-reduce", fmtInt(c.allreduce)] : null,
    isNum(c.metadata) && c.metadata ? ["metadata msgs", fmtInt(c.metadata)] : null,
    main.bytes ? ["bytes moved", fmtBytes(main.bytes.overall)] : null,
    row.bound ? ["bound pulls / pushes", `${fmtInt(row.bound.pulls)} / ${fmtInt(row.bound.pushes)}`] : null,
    isNum(row.iterations) ? ["iterations", fmtInt(row.iterations)] : null,
    isNum(main.wall_seconds) ? ["wall time", fmtSeconds(main.wall_seconds)] : null,
    ["parameters", Object.keys(row.params || {}).length ? Object.entries(row.params).map(([k, v]) => `${k}=${fmtValue(v)}`).join(", ") : "defaults"],
  ].filter(Boolean);
  return h("div", { class: "details" }, SCHEDULER_INFO[row.kind] ? h("p", { class: "muted" }, SCHEDULER_INFO[row.kind]) : null, main.tracking_error ? h("p", { class: "muted small" }, `MLflow logging failed: ${main.tracking_error}`) : null, h("dl", { class: "facts facts-small" }, pairs.map(([k, v]) => h("div", {}, h("dt", {}, k), h("dd", {}, v)))));
}

// ------------------------------------------------------------------ grid overview

function heat(v) {
  if (!isNum(v)) return null;
  // green below 1, neutral at 1, red above
  const t = Math.max(-1, Math.min(1, (v - 1) / 0.6));
  const alpha = Math.abs(t) * 0.55 + 0.05;
  return t <= 0 ? `rgba(22, 163, 74, ${alpha})` : `rgba(220, 38, 38, ${alpha})`;
}

function gridOverview(groups, state, rerender) {
  const labels = [...new Set(groups.flatMap((g) => g.rows.map((r) => r.label)))];
  return h(
    "section",
    { class: "card section", "aria-labelledby": "grid-title" },
    h("div", { class: "section-head" }, h("div", {}, h("h2", { id: "grid-title" }, "Across the grid"), h("p", { class: "section-note" }, "Overall traffic relative to naive at every point. Green is less traffic than naive. Pick a row to see its comparison and charts."))),
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "table heatmap", "data-testid": "grid-table" },
        h("caption", { class: "visually-hidden" }, "Overall relative traffic per grid point and scheduler"),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Point"), labels.map((l) => h("th", { scope: "col", class: "num" }, l)))),
        h(
          "tbody",
          {},
          groups.map((g) =>
            h(
              "tr",
              { class: ["row-link", g.key === state.group ? "row-selected" : null], "aria-selected": g.key === state.group ? "true" : "false" },
              h(
                "th",
                { scope: "row" },
                h(
                  "button",
                  {
                    type: "button",
                    class: "linklike",
                    onclick: () => {
                      state.group = g.key;
                      state.groupChosen = true;
                      rerender();
                    },
                  },
                  g.title,
                ),
              ),
              labels.map((l) => {
                const r = g.rows.find((x) => x.label === l);
                const v = r && r.relative ? r.relative.overall : null;
                return h("td", { class: "num heat", style: { background: heat(v) } }, isNum(v) ? v.toFixed(3) : r ? (r.status === "failed" ? "failed" : "…") : "");
              }),
            ),
          ),
        ),
      ),
    ),
  );
}

// ------------------------------------------------------------------ charts

function chartsSection(group, colors, state) {
  const rows = group.rows;
  const withRel = rows.filter((r) => r.relative && METRICS.some((m) => isNum(r.relative[m])));
  const herald = withRel.some(isPublishedHerald);
  const cards = [];
  if (withRel.length) {
    const bars = groupedBarChart({
      title: "Traffic relative to naive",
      description: withRel.map((r) => `${r.label}: pull ${fmtFixed(r.relative.pull, 2)}, push ${fmtFixed(r.relative.push, 2)}, overall ${fmtFixed(r.relative.overall, 2)}`).join("; "),
      groups: withRel.map((r) => ({ label: r.label, values: r.relative, color: colors.get(r.label), markers: isPublishedHerald(r) ? PUBLISHED_HERALD : null })),
      metrics: METRICS,
      colors: METRIC_COLORS,
      reference: 1,
      referenceLabel: "naive = 1",
      markerLabel: "Herald paper (Table 1)",
      yLabel: "× naive",
    });
    cards.push(
      h(
        "div",
        { class: "card chart-card", "data-testid": "relative-chart" },
        bars,
        h("p", { class: "chart-note" }, herald ? "Diamonds mark Herald's published Table 1 figures (pull 0.52, push 0.42, overall 0.46, on Criteo Kaggle)." : "The dashed line is naive (1.0); bars below it mean less communication."),
      ),
    );
  }
  const seriesCard = seriesChartCard(rows, colors, state);
  if (seriesCard) cards.push(seriesCard);
  const quality = qualityChart(rows, colors);
  if (quality) cards.push(quality);
  if (!cards.length) return h("div", {});
  return h("section", { class: "charts", "aria-label": "Charts" }, cards);
}

function movingAverage(values, window) {
  if (window <= 1) return values;
  const out = [];
  let sum = 0;
  let count = 0;
  const q = [];
  for (const v of values) {
    const x = isNum(v) ? v : 0;
    q.push(x);
    sum += x;
    count += 1;
    if (q.length > window) {
      sum -= q.shift();
      count -= 1;
    }
    out.push(sum / count);
  }
  return out;
}

function cumulative(values, scale) {
  let acc = 0;
  return values.map((v) => (acc += (isNum(v) ? v : 0) * scale));
}

const SERIES_NAMES = { pull: "pulls", push: "pushes", loss: "training loss", overall: "overall" };

function seriesChartCard(rows, colors, state) {
  const withSeries = rows.filter((r) => r.series && Object.values(r.series).some((v) => Array.isArray(v) && v.length));
  if (!withSeries.length) return null;
  const keys = [...new Set(withSeries.flatMap((r) => Object.keys(r.series).filter((k) => Array.isArray(r.series[k]) && r.series[k].length)))];
  const ordered = ["pull", "push", "loss"].filter((k) => keys.includes(k)).concat(keys.filter((k) => !["pull", "push", "loss"].includes(k)));
  state.seriesOpts = state.seriesOpts || { metric: ordered[0], view: "iteration", smooth: true, clip: true };
  const local = state.seriesOpts;
  if (!ordered.includes(local.metric)) local.metric = ordered[0];
  const holder = h("div", { class: "chart-holder" });
  const naive = withSeries.find(isBaseline);

  const draw = () => {
    const metric = local.metric;
    const isTraffic = metric !== "loss";
    const view = isTraffic ? local.view : "iteration";
    const series = [];
    for (const r of withSeries) {
      const values = r.series[metric];
      if (!Array.isArray(values) || !values.length) continue;
      const n = values.length;
      const scale = isNum(r.iterations) && r.iterations > n ? r.iterations / n : 1;
      let ys = values;
      if (view === "iteration") ys = local.smooth ? movingAverage(values, Math.max(1, Math.round(n / 40))) : values;
      else if (view === "cumulative") ys = cumulative(values, scale);
      else if (view === "relative") {
        const base = naive && naive.series[metric];
        if (!base || base.length !== n) continue;
        const a = cumulative(values, 1);
        const b = cumulative(base, 1);
        ys = a.map((v, i) => (b[i] > 0 ? v / b[i] : null));
      }
      series.push({ label: r.label, color: colors.get(r.label), points: seriesPoints(ys, r.iterations) });
    }
    // BagPipe's first iterations (its cold prefetch) dwarf every other line: clip the axis at
    // the 98th percentile of the values shown, spikes drawn at the top edge.
    const all = series.flatMap((x) => x.points.map((p) => p[1])).filter(isNum).sort((a, b) => a - b);
    const clipAt = view === "iteration" && local.clip && all.length > 20 ? all[Math.floor(0.98 * (all.length - 1))] : null;
    const clipped = isNum(clipAt) && clipAt > 0 && clipAt < all[all.length - 1] ? clipAt : null;
    const yLabel = view === "relative" ? `cumulative ${SERIES_NAMES[metric] || metric} ÷ naive` : view === "cumulative" ? `cumulative ${SERIES_NAMES[metric] || metric} (rows)` : isTraffic ? `${SERIES_NAMES[metric] || metric} per iteration (rows)` : SERIES_NAMES[metric] || metric;
    replace(
      holder,
      series.length
        ? lineChart({
            title: `${(SERIES_NAMES[metric] || metric).replace(/^./, (c) => c.toUpperCase())} over iterations`,
            description: `Per-scheduler ${metric} series: ${series.map((x) => x.label).join(", ")}`,
            series,
            xLabel: "iteration",
            yLabel,
            reference: view === "relative" ? 1 : null,
            zeroBased: metric !== "loss",
            yMax: clipped,
          })
        : h("p", { class: "muted pad" }, "No series to show in this view."),
    );
  };

  const controls = h("div", { class: "controls controls-tight" });
  const renderControls = () => {
    const isTraffic = local.metric !== "loss";
    replace(
      controls,
      ordered.length > 1
        ? segmented(
            "Series",
            ordered.map((k) => [k, SERIES_NAMES[k] || k]),
            local.metric,
            (v) => {
              local.metric = v;
              renderControls();
              draw();
            },
          )
        : null,
      isTraffic
        ? segmented(
            "View",
            [
              ["iteration", "Per iteration"],
              ["cumulative", "Cumulative"],
              naive ? ["relative", "÷ naive"] : null,
            ].filter(Boolean),
            local.view,
            (v) => {
              local.view = v;
              renderControls();
              draw();
            },
          )
        : null,
      isTraffic && local.view === "iteration"
        ? h(
            "label",
            { class: "check" },
            h("input", {
              type: "checkbox",
              checked: local.smooth,
              onchange: (e) => {
                local.smooth = e.target.checked;
                draw();
              },
            }),
            "Smooth",
          )
        : null,
      isTraffic && local.view === "iteration"
        ? h(
            "label",
            { class: "check", title: "Clip the axis at the 98th percentile: spikes (BagPipe's first iterations) are drawn at the top edge instead of flattening every other line" },
            h("input", {
              type: "checkbox",
              checked: local.clip,
              "data-testid": "series-clip",
              onchange: (e) => {
                local.clip = e.target.checked;
                draw();
              },
            }),
            "Clip spikes",
          )
        : null,
    );
  };
  renderControls();
  draw();
  return h("div", { class: "card chart-card", "data-testid": "series-chart" }, controls, holder, h("p", { class: "chart-note" }, "Click a legend entry to hide or show a scheduler; hover the chart to read values."));
}

function qualityChart(rows, colors) {
  const withMetrics = rows.filter((r) => r.metrics && (isNum(r.metrics.auc) || isNum(r.metrics.accuracy)));
  if (!withMetrics.length) return null;
  const metrics = ["auc", "accuracy"].filter((m) => withMetrics.some((r) => isNum(r.metrics[m])));
  return h(
    "div",
    { class: "card chart-card", "data-testid": "quality-chart" },
    groupedBarChart({
      title: "Model quality after training",
      description: withMetrics.map((r) => `${r.label}: ${metrics.map((m) => `${m} ${fmtFixed(r.metrics[m], 4)}`).join(", ")}`).join("; "),
      groups: withMetrics.map((r) => ({ label: r.label, values: r.metrics, color: colors.get(r.label) })),
      metrics,
      metricNames: { auc: "AUC", accuracy: "accuracy" },
      colors: { auc: "#4f46e5", accuracy: "#0891b2" },
      yLabel: "held-out",
    }),
    h("p", { class: "chart-note" }, "Held-out AUC and accuracy of the model trained under each scheduler: a scheduler should save traffic without hurting these."),
  );
}

// ------------------------------------------------------------------ spec

function specSection(d) {
  const text = toYaml(d.spec || {});
  const copy = h(
    "button",
    {
      type: "button",
      class: "btn btn-ghost btn-small",
      onclick: async (e) => {
        try {
          await navigator.clipboard.writeText(text);
          e.currentTarget.textContent = "Copied";
        } catch {
          e.currentTarget.textContent = "Copy failed";
        }
      },
    },
    "Copy",
  );
  return h("details", { class: "card section spec-details" }, h("summary", {}, h("h2", {}, "Spec")), h("div", { class: "spec-tools" }, copy), h("pre", { class: "code" }, text));
}
