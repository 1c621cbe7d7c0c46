// What the numbers mean: runs, groups, totals and the schedulers' colours and descriptions.

import { isNum } from "./dom.js";

export const METRICS = ["pull", "push", "overall"];
export const METRIC_COLORS = { pull: "#2563eb", push: "#c2410c", overall: "#0f766e" };
export const METRIC_HELP = {
  pull: "Rows fetched from the parameter server: miss pulls (not cached) + update pulls (cached but outdated).",
  push: "Rows sent to the parameter server: evict pushes (dirty copy evicted) + update pushes (another worker needs the row). Flush pushes at the end are reported apart.",
  overall: "pull + push (+ all-reduce row transfers).",
};

/** Herald (NSDI'24) Table 1, relative to naive on Criteo. */
export const PUBLISHED_HERALD = { pull: 0.52, push: 0.42, overall: 0.46 };

export const SCHEDULER_INFO = {
  naive: "Baseline: random partition, every updated row written through after every iteration.",
  herald: "Herald: location-aware balanced partition + on-demand sync.",
  "herald-sync-only": "Ablation: random partition + Herald's on-demand sync.",
  "herald-partition-only": "Ablation: Herald's location-aware partition + write-through.",
  het: "HET: per-row clocks; reads and writes within a staleness bound.",
  fae: "FAE: hot rows replicated and all-reduced; cold inputs go through the caches.",
  bagpipe: "BagPipe: oracle cacher prefetching a window of batches ahead.",
  "herald-plus": "herald-plus (ours): batch-affine partition, lookahead-aware replacement, direct transfer.",
};

const KIND_COLORS = {
  naive: "#64748b",
  herald: "#2563eb",
  "herald-sync-only": "#7c3aed",
  "herald-partition-only": "#db2777",
  het: "#c2410c",
  fae: "#15803d",
  bagpipe: "#a16207",
  "herald-plus": "#0e7490",
};
const EXTRA_COLORS = ["#4f46e5", "#be123c", "#0d9488", "#9333ea", "#b45309", "#0369a1", "#4d7c0f", "#c026d3", "#334155", "#e11d48"];

/** Colours for scheduler labels: the kind's colour first, then distinct extras. */
export function colorMap(entries) {
  const map = new Map();
  const used = new Set();
  let extra = 0;
  for (const { label, kind } of entries) {
    if (map.has(label)) continue;
    let color = KIND_COLORS[kind];
    if (!color || used.has(color)) {
      color = EXTRA_COLORS[extra % EXTRA_COLORS.length];
      extra += 1;
    }
    used.add(color);
    map.set(label, color);
  }
  return map;
}

export const ACTIVE = new Set(["queued", "running"]);

export function isActive(status) {
  return ACTIVE.has(status);
}

/** pull / push / overall rows of a run, whatever shape its counts come in. */
export function totalsOf(run) {
  const c = run.counts || {};
  const t = run.totals || {};
  const pick = (name, fallback) => (isNum(c[name]) ? c[name] : isNum(t[name]) ? t[name] : fallback);
  const sum = (...names) => (names.every((n) => isNum(c[n])) ? names.reduce((a, n) => a + c[n], 0) : null);
  const pull = pick("pull", sum("miss_pull", "update_pull"));
  const push = pick("push", sum("evict_push", "update_push"));
  const allreduce = isNum(c.allreduce) ? c.allreduce : 0;
  const overall = pick("overall", isNum(pull) && isNum(push) ? pull + push + allreduce : null);
  return { pull, push, overall, allreduce: isNum(c.allreduce) ? c.allreduce : null, flush: isNum(c.flush_push) ? c.flush_push : null };
}

export function kindOf(run) {
  return run.scheduler || String(run.label || "").split(/\s/)[0];
}

export function isBaseline(row) {
  return row.kind === "naive";
}

/** Herald at its published setting (lookahead 1) gets the paper's markers. */
export function isPublishedHerald(row) {
  if (row.kind !== "herald") return false;
  const la = row.params && row.params.lookahead;
  return la === undefined || la === null || Number(la) === 1;
}

function pointLabel(point) {
  if (point === null || point === undefined || point === "") return "default";
  if (typeof point === "object") {
    const parts = Object.entries(point).map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`);
    return parts.length ? parts.join(", ") : "default";
  }
  return String(point);
}

/**
 * Runs grouped by (grid point, seed); in each group one row per scheduler label, a simulated
 * run and a trained run of the same label merged into one row.
 */
export function groupRuns(runs) {
  const groups = new Map();
  for (const run of runs || []) {
    const point = run.point_label ? String(run.point_label) : pointLabel(run.point);
    const seed = run.seed ?? 0;
    const key = `${point}\u0000${seed}`;
    if (!groups.has(key)) groups.set(key, { key, point, seed, rows: new Map() });
    const group = groups.get(key);
    const label = run.label || run.scheduler || `run ${run.id}`;
    const row = group.rows.get(label) || { label, kind: kindOf(run), params: run.params || {}, runs: [] };
    row.runs.push(run);
    group.rows.set(label, row);
  }
  const out = [...groups.values()].map((g) => ({ ...g, rows: [...g.rows.values()].map(finishRow) }));
  for (const g of out) {
    g.rows.sort((a, b) => (isBaseline(b) ? 1 : 0) - (isBaseline(a) ? 1 : 0));
    const seeds = new Set(out.map((x) => x.seed));
    const points = new Set(out.map((x) => x.point));
    const parts = [];
    if (points.size > 1 || g.point !== "default") parts.push(g.point);
    if (seeds.size > 1) parts.push(`seed ${g.seed}`);
    g.title = parts.join(" · ") || "all runs";
  }
  return out;
}

const STATUS_RANK = { failed: 5, running: 4, queued: 3, cancelled: 2, succeeded: 1, finished: 1 };

function finishRow(row) {
  // A simulated run and a trained run of one scheduler share a row: traffic from the simulated
  // one (when both have it), model quality from the trained one.
  const simulatedFirst = [...row.runs].sort((a, b) => (a.action === "train" ? 1 : 0) - (b.action === "train" ? 1 : 0));
  const withRelative = simulatedFirst.find((r) => r.relative && METRICS.some((m) => isNum(r.relative[m])));
  const withMetrics = row.runs.find((r) => r.metrics && Object.values(r.metrics).some(isNum));
  const main = withRelative || simulatedFirst.find((r) => r.counts) || simulatedFirst[0];
  const status = row.runs.map((r) => r.status).sort((a, b) => (STATUS_RANK[b] || 0) - (STATUS_RANK[a] || 0))[0];
  const errors = row.runs.map((r) => r.error).filter(Boolean);
  const series = {};
  for (const r of [...simulatedFirst].reverse()) Object.assign(series, r.series || {});
  return {
    ...row,
    main,
    status,
    error: errors.join("\n"),
    relative: (withRelative && withRelative.relative) || null,
    totals: main && (main.counts || main.totals) ? totalsOf(main) : null,
    metrics: withMetrics ? withMetrics.metrics : null,
    bound: main ? main.bound || null : null,
    time: main ? main.time || null : null,
    side: row.runs.map((r) => r.side_by_side).find(Boolean) || null,
    series,
    iterations: main && isNum(main.iterations) ? main.iterations : null,
    mlflow: row.runs.map((r) => r.mlflow_run_url).find(Boolean) || null,
    progress: runningProgress(row.runs),
    stage: row.runs.filter((r) => r.status === "running").map((r) => r.stage).find(Boolean) || null,
  };
}

/** The mean fraction done of a row's running runs, or null when none is running. */
function runningProgress(runs) {
  const running = runs.filter((r) => r.status === "running");
  if (!running.length) return null;
  return running.reduce((sum, r) => sum + (isNum(r.progress) ? r.progress : 0), 0) / running.length;
}

/** Modelled time of a row under a profile and its speedup over the group's naive. */
export function timeFor(row, baseline, profile) {
  const t = row.time && row.time[profile];
  const b = baseline && baseline.time && baseline.time[profile];
  if (!t) return { ms: null, speedup: null };
  const ms = isNum(t.mean_iteration_s) ? t.mean_iteration_s * 1e3 : null;
  const speedup = isNum(t.speedup) ? t.speedup : b && isNum(b.total_s) && isNum(t.total_s) && t.total_s > 0 ? b.total_s / t.total_s : null;
  return { ms, speedup };
}

export function profilesOf(groups) {
  const names = new Set();
  for (const g of groups) for (const r of g.rows) for (const p of Object.keys(r.time || {})) names.add(p);
  return [...names];
}
