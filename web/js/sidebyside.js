// Schedulers and placements side by side in the comparison table: bytes per iteration per tier
// and modelled communication per iteration, relative to the spec's baseline (run.side_by_side,
// docs/api.md). Columns appear only in a group that holds placements.

import { h, isNum } from "./dom.js";
import { infoTip } from "./ui.js";

/** Whether a group's rows carry side-by-side figures (it holds placements). */
export function hasSideBySide(rows) {
  return rows.some((r) => r.side);
}

/** Overlap changes no communication time: the comparison keeps the profiles without it. */
function commProfile(profile) {
  return String(profile || "tcp-100g").replace(/-overlap$/, "");
}

const ratio = (v) => (isNum(v) ? `${v.toFixed(2)}×` : "—");
const mb = (v) => (isNum(v) ? (v / 1e6).toFixed(3) : "—");

/** The header cells (each spanning both header rows). */
export function sideHeads(profile, baseline) {
  const span2 = { rowspan: "2" };
  const p = commProfile(profile);
  return [
    h("th", { scope: "col", class: "num", ...span2 }, "intra-host MB/it", infoTip("Bytes per iteration between devices of one host. A cache scheduler's parameter server sits off the workers' hosts: all its traffic is inter-host.")),
    h("th", { scope: "col", class: "num", ...span2 }, "inter-host MB/it"),
    h("th", { scope: "col", class: "num", ...span2, "data-testid": "side-bytes-head" }, `bytes × ${baseline}`),
    h("th", { scope: "col", class: "num", ...span2 }, `comm ms/it (${p})`, infoTip(`Modelled communication per iteration on ${p}, and its ratio to ${baseline}'s.`)),
  ];
}

/** A row's cells, "—" where it has no figures. */
export function sideCells(row, profile) {
  const s = row.side;
  const p = commProfile(profile);
  const bytes = (s && s.bytes_per_iteration) || {};
  const ms = s && s.comm_ms_per_iteration ? s.comm_ms_per_iteration[p] : null;
  const rel = (s && s.relative) || {};
  return [
    h("td", { class: "num", "data-testid": "side-intra" }, mb(bytes.intra_host)),
    h("td", { class: "num", "data-testid": "side-inter" }, mb(bytes.inter_host)),
    h("td", { class: "num", "data-testid": "side-bytes" }, ratio(rel.bytes)),
    h("td", { class: "num" }, isNum(ms) ? `${ms.toFixed(3)} (${ratio(rel.comm && rel.comm[p])})` : "—"),
  ];
}
