// SVG charts drawn at the container's width (redrawn on resize): grouped bars, lines, scatter.

import { h, s, clear, isNum, fmtCompact, nextId } from "./dom.js";

/** "Nice" ticks covering [lo, hi]. */
export function niceTicks(lo, hi, count = 5) {
  if (!isNum(lo) || !isNum(hi)) return [0, 1];
  if (hi === lo) {
    hi = lo === 0 ? 1 : lo * 1.1;
    if (hi < lo) [lo, hi] = [hi, lo];
  }
  const span = hi - lo;
  const raw = span / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((x) => x >= raw) || 10 * mag;
  const start = Math.floor(lo / step) * step;
  const ticks = [];
  for (let v = start; v <= hi + step * 1e-9; v += step) ticks.push(+v.toPrecision(12));
  if (ticks[ticks.length - 1] < hi) ticks.push(+(ticks[ticks.length - 1] + step).toPrecision(12));
  return ticks;
}

function tickFormat(step) {
  let digits = 0;
  while (digits < 4 && Math.abs(Math.round(step * 10 ** digits) - step * 10 ** digits) > 1e-6) digits += 1;
  return (v) => (Math.abs(v) >= 1e4 ? fmtCompact(v) : v.toFixed(digits));
}

/** A chart frame: a <figure> whose SVG is redrawn whenever its width changes. */
function responsive(figure, holder, draw, minWidth = 260) {
  let lastWidth = 0;
  const render = () => {
    if (!holder.isConnected) return;
    const width = Math.max(minWidth, Math.floor(holder.clientWidth || holder.getBoundingClientRect().width || 600));
    if (width === lastWidth) return;
    lastWidth = width;
    clear(holder);
    holder.append(draw(width));
  };
  if (typeof ResizeObserver !== "undefined") {
    const ro = new ResizeObserver(() => requestAnimationFrame(render));
    ro.observe(holder);
  } else {
    window.addEventListener("resize", render);
  }
  // First draw once attached (width known); a fallback width if never measured.
  requestAnimationFrame(render);
  holder.append(draw(600));
  lastWidth = 0;
  figure.redraw = () => {
    lastWidth = 0;
    render();
  };
  return figure;
}

function legendItem(color, text, { marker = "square", pressed, onToggle, title } = {}) {
  const swatch = h("span", { class: ["swatch", `swatch-${marker}`], style: { "--swatch": color }, "aria-hidden": "true" });
  if (onToggle) {
    return h(
      "button",
      { type: "button", class: "legend-item legend-toggle", "aria-pressed": pressed ? "true" : "false", title: title || `Show or hide ${text}`, onclick: onToggle },
      swatch,
      text,
    );
  }
  return h("span", { class: "legend-item", title: title || null }, swatch, text);
}

/**
 * Grouped bars: one group per scheduler, one bar per metric.
 * opts: {groups: [{label, values: {metric: v}, markers?: {metric: v}, color?}], metrics, colors,
 *        reference: 1, referenceLabel, markerLabel, title, description, yLabel}
 */
export function groupedBarChart(opts) {
  const { groups, metrics, colors, reference = null, referenceLabel = "", markerLabel = "", title, description, yLabel = "" } = opts;
  const holder = h("div", { class: "chart-svg" });
  const hasMarkers = groups.some((g) => g.markers);
  const legend = h(
    "div",
    { class: "legend" },
    metrics.map((m) => legendItem(colors[m], opts.metricNames ? opts.metricNames[m] : m)),
    reference !== null ? legendItem("var(--ref)", referenceLabel, { marker: "dash" }) : null,
    hasMarkers ? legendItem("var(--marker)", markerLabel, { marker: "diamond" }) : null,
  );
  const figure = h("figure", { class: "chart", "data-chart": "bars" }, title ? h("figcaption", { class: "chart-title" }, title) : null, legend, holder);

  const values = groups.flatMap((g) => [...metrics.map((m) => g.values[m]), ...metrics.map((m) => (g.markers ? g.markers[m] : null))]).filter(isNum);
  const maxV = Math.max(reference ?? 0, ...values, 0.1);

  const draw = (width) => {
    const longest = Math.max(...groups.map((g) => g.label.length), 4);
    const groupW0 = (width - 60) / Math.max(1, groups.length);
    const rotate = longest * 6.6 > groupW0 - 6;
    const bottom = rotate ? Math.min(110, 30 + longest * 3.7) : 44;
    const height = Math.max(200, Math.min(300, Math.round(width * 0.42))) + bottom;
    const m = { top: 14, right: 12, bottom, left: 48 };
    const iw = width - m.left - m.right;
    const ih = height - m.top - m.bottom;
    const ticks = niceTicks(0, maxV * 1.08, 5);
    const top = ticks[ticks.length - 1];
    const y = (v) => m.top + ih - (v / top) * ih;
    const fmt = tickFormat(ticks[1] - ticks[0]);
    const svg = s("svg", {
      width,
      height,
      viewBox: `0 0 ${width} ${height}`,
      role: "img",
      "aria-labelledby": "",
      class: "chart-canvas",
    });
    const titleId = nextId("bars-title");
    const descId = nextId("bars-desc");
    svg.setAttribute("aria-labelledby", `${titleId} ${descId}`);
    svg.append(s("title", { id: titleId }, title || "Bar chart"), s("desc", { id: descId }, description || ""));
    // grid + y axis
    for (const t of ticks) {
      svg.append(
        s("line", { class: "grid", x1: m.left, x2: width - m.right, y1: y(t), y2: y(t) }),
        s("text", { class: "tick", x: m.left - 8, y: y(t), "text-anchor": "end", "dominant-baseline": "middle" }, fmt(t)),
      );
    }
    if (yLabel) {
      svg.append(s("text", { class: "axis-label", transform: `translate(12 ${m.top + ih / 2}) rotate(-90)`, "text-anchor": "middle" }, yLabel));
    }
    const gw = iw / Math.max(1, groups.length);
    const pad = Math.min(24, gw * 0.18);
    const bw = Math.max(3, Math.min(36, (gw - 2 * pad) / metrics.length));
    const showValues = bw >= 26;
    groups.forEach((g, gi) => {
      const gx = m.left + gi * gw;
      const x0 = gx + (gw - bw * metrics.length) / 2;
      const groupEl = s("g", { class: "bar-group" });
      metrics.forEach((metric, mi) => {
        const v = g.values[metric];
        const bx = x0 + mi * bw;
        if (isNum(v)) {
          const yTop = y(Math.min(v, top));
          groupEl.append(
            s(
              "rect",
              { class: "bar", x: bx + 1, y: yTop, width: bw - 2, height: Math.max(0, m.top + ih - yTop), fill: colors[metric], rx: 2, "data-metric": metric, "data-value": v },
              s("title", {}, `${g.label} — ${metric}: ${v.toFixed(3)}`),
            ),
          );
          if (showValues) {
            groupEl.append(s("text", { class: "bar-value", x: bx + bw / 2, y: yTop - 4, "text-anchor": "middle" }, v.toFixed(2)));
          }
        } else {
          groupEl.append(s("text", { class: "bar-missing", x: bx + bw / 2, y: m.top + ih - 4, "text-anchor": "middle" }, "–"));
        }
        const mk = g.markers ? g.markers[metric] : null;
        if (isNum(mk)) {
          const my = y(mk);
          const cx = bx + bw / 2;
          const r = Math.max(3.5, Math.min(6, bw / 4));
          groupEl.append(
            s(
              "g",
              { class: "marker", "data-marker": metric },
              s("line", { x1: bx - 1, x2: bx + bw + 1, y1: my, y2: my }),
              s("path", { d: `M${cx} ${my - r} L${cx + r} ${my} L${cx} ${my + r} L${cx - r} ${my} Z` }),
              s("title", {}, `${markerLabel} — ${metric}: ${mk.toFixed(2)}`),
            ),
          );
        }
      });
      const lx = gx + gw / 2;
      const ly = m.top + ih + 16;
      const label = s("text", { class: "group-label", x: lx, y: ly, "text-anchor": rotate ? "end" : "middle", transform: rotate ? `rotate(-32 ${lx} ${ly})` : null }, g.label);
      if (g.color) groupEl.append(s("rect", { class: "group-key", x: lx - 9, y: m.top + ih + 3, width: 18, height: 3, rx: 1.5, fill: g.color }));
      groupEl.append(label);
      svg.append(groupEl);
    });
    svg.append(s("line", { class: "axis", x1: m.left, x2: width - m.right, y1: m.top + ih, y2: m.top + ih }));
    if (reference !== null) {
      const ry = y(reference);
      svg.append(
        s("line", { class: "reference", x1: m.left, x2: width - m.right, y1: ry, y2: ry }, s("title", {}, referenceLabel)),
      );
    }
    return svg;
  };
  return responsive(figure, holder, draw);
}

/**
 * Lines over a shared x axis, with toggles in the legend and a hover read-out.
 * opts: {series: [{label, color, points: [[x, y], ...]}], xLabel, yLabel, title, description, yFormat}
 */
export function lineChart(opts) {
  const { series, xLabel = "", yLabel = "", title, description } = opts;
  const yFormat = opts.yFormat || ((v) => (Math.abs(v) >= 1e4 ? fmtCompact(v) : +v.toPrecision(4)));
  const hidden = new Set(opts.hidden || []);
  const holder = h("div", { class: "chart-svg" });
  const legend = h("div", { class: "legend" });
  const readout = h("div", { class: "chart-readout", "aria-live": "off" });
  const figure = h("figure", { class: "chart", "data-chart": "lines" }, title ? h("figcaption", { class: "chart-title" }, title) : null, legend, holder, readout);

  const renderLegend = () => {
    clear(legend);
    for (const sr of series) {
      legend.append(
        legendItem(sr.color, sr.label, {
          marker: "line",
          pressed: !hidden.has(sr.label),
          onToggle: () => {
            if (hidden.has(sr.label)) hidden.delete(sr.label);
            else hidden.add(sr.label);
            renderLegend();
            figure.redraw();
          },
        }),
      );
    }
  };
  renderLegend();

  const draw = (width) => {
    const height = Math.max(220, Math.min(340, Math.round(width * 0.46)));
    const m = { top: 12, right: 16, bottom: 40, left: 60 };
    const iw = width - m.left - m.right;
    const ih = height - m.top - m.bottom;
    const shown = series.filter((sr) => !hidden.has(sr.label) && sr.points.length);
    const xs = shown.flatMap((sr) => sr.points.map((p) => p[0]));
    const ys = shown.flatMap((sr) => sr.points.map((p) => p[1])).filter(isNum);
    const xMin = xs.length ? Math.min(...xs) : 0;
    const xMax = xs.length ? Math.max(...xs) : 1;
    const yMinData = ys.length ? Math.min(...ys) : 0;
    // opts.yMax clips the axis (a spike drawn at the top edge instead of flattening the rest).
    const yMaxData = isNum(opts.yMax) ? opts.yMax : ys.length ? Math.max(...ys) : 1;
    const yLo = opts.zeroBased === false ? yMinData - (yMaxData - yMinData) * 0.05 : Math.min(0, yMinData);
    const yTicks = niceTicks(yLo, yMaxData * 1.04 || 1, 5);
    const xTicks = niceTicks(xMin, xMax, Math.max(2, Math.min(8, Math.floor(iw / 90))));
    const y0 = yTicks[0];
    const y1 = yTicks[yTicks.length - 1];
    const xSpan = xMax - xMin || 1;
    const x = (v) => m.left + ((v - xMin) / xSpan) * iw;
    const y = (v) => m.top + ih - ((v - y0) / (y1 - y0 || 1)) * ih;
    const svg = s("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img", class: "chart-canvas" });
    const titleId = nextId("lines-title");
    const descId = nextId("lines-desc");
    svg.setAttribute("aria-labelledby", `${titleId} ${descId}`);
    svg.append(s("title", { id: titleId }, title || "Line chart"), s("desc", { id: descId }, description || ""));
    const yf = tickFormat(yTicks[1] - yTicks[0]);
    for (const t of yTicks) {
      svg.append(
        s("line", { class: "grid", x1: m.left, x2: width - m.right, y1: y(t), y2: y(t) }),
        s("text", { class: "tick", x: m.left - 8, y: y(t), "text-anchor": "end", "dominant-baseline": "middle" }, yf(t)),
      );
    }
    for (const t of xTicks) {
      if (t < xMin - 1e-9 || t > xMax + 1e-9) continue;
      svg.append(
        s("line", { class: "tick-mark", x1: x(t), x2: x(t), y1: m.top + ih, y2: m.top + ih + 5 }),
        s("text", { class: "tick", x: x(t), y: m.top + ih + 18, "text-anchor": "middle" }, Math.abs(t) >= 1e4 ? fmtCompact(t) : String(t)),
      );
    }
    svg.append(s("line", { class: "axis", x1: m.left, x2: width - m.right, y1: m.top + ih, y2: m.top + ih }));
    if (xLabel) svg.append(s("text", { class: "axis-label", x: m.left + iw / 2, y: height - 4, "text-anchor": "middle" }, xLabel));
    if (yLabel) svg.append(s("text", { class: "axis-label", transform: `translate(13 ${m.top + ih / 2}) rotate(-90)`, "text-anchor": "middle" }, yLabel));
    if (opts.reference !== undefined && opts.reference !== null && opts.reference >= y0 && opts.reference <= y1) {
      svg.append(s("line", { class: "reference", x1: m.left, x2: width - m.right, y1: y(opts.reference), y2: y(opts.reference) }));
    }
    for (const sr of shown) {
      const d = sr.points
        .filter((p) => isNum(p[1]))
        .map((p, i) => `${i ? "L" : "M"}${x(p[0]).toFixed(1)} ${y(Math.min(p[1], y1)).toFixed(1)}`)
        .join("");
      svg.append(s("path", { class: "line", d, stroke: sr.color, "data-series": sr.label }));
    }
    // hover read-out
    const cursor = s("line", { class: "cursor", x1: 0, x2: 0, y1: m.top, y2: m.top + ih, visibility: "hidden" });
    const dots = s("g", { class: "cursor-dots" });
    const overlay = s("rect", { class: "overlay", x: m.left, y: m.top, width: iw, height: ih, fill: "transparent" });
    const show = (clientX) => {
      const rect = svg.getBoundingClientRect();
      const px = ((clientX - rect.left) / rect.width) * width;
      const xv = xMin + ((px - m.left) / iw) * xSpan;
      clear(dots);
      clear(readout);
      cursor.setAttribute("visibility", "visible");
      let cx = null;
      const parts = [];
      for (const sr of shown) {
        let best = null;
        for (const p of sr.points) if (best === null || Math.abs(p[0] - xv) < Math.abs(best[0] - xv)) best = p;
        if (!best || !isNum(best[1])) continue;
        cx = cx ?? best[0];
        dots.append(s("circle", { cx: x(best[0]), cy: y(best[1]), r: 3.5, fill: sr.color }));
        parts.push(h("span", { class: "readout-item" }, h("span", { class: "swatch swatch-line", style: { "--swatch": sr.color } }), `${sr.label}: `, h("strong", {}, String(yFormat(best[1])))));
      }
      if (cx !== null) {
        cursor.setAttribute("x1", x(cx));
        cursor.setAttribute("x2", x(cx));
        readout.append(h("span", { class: "readout-x" }, `${xLabel || "x"} ${cx}`), ...parts);
      }
    };
    overlay.addEventListener("mousemove", (e) => show(e.clientX));
    overlay.addEventListener("mouseleave", () => {
      cursor.setAttribute("visibility", "hidden");
      clear(dots);
      clear(readout);
    });
    svg.append(cursor, dots, overlay);
    return svg;
  };
  return responsive(figure, holder, draw);
}

/**
 * Points and an optional step line (a study's history: each trial's value and the best so far).
 * opts: {points: [{x, y, color, label}], step: [[x, y]], xLabel, yLabel, title, description, legend}
 */
export function scatterChart(opts) {
  const { points, step = null, xLabel = "", yLabel = "", title, description } = opts;
  const holder = h("div", { class: "chart-svg" });
  const legend = h("div", { class: "legend" }, (opts.legend || []).map((l) => legendItem(l.color, l.label, { marker: l.marker || "dot" })));
  const figure = h("figure", { class: "chart", "data-chart": "scatter" }, title ? h("figcaption", { class: "chart-title" }, title) : null, legend, holder);
  const draw = (width) => {
    const height = Math.max(220, Math.min(320, Math.round(width * 0.45)));
    const m = { top: 12, right: 16, bottom: 40, left: 60 };
    const iw = width - m.left - m.right;
    const ih = height - m.top - m.bottom;
    const xs = points.map((p) => p.x).filter(isNum);
    const ys = points.map((p) => p.y).filter(isNum);
    const xMin = xs.length ? Math.min(...xs) : 0;
    const xMax = xs.length ? Math.max(...xs) : 1;
    const yMin = ys.length ? Math.min(...ys) : 0;
    const yMax = ys.length ? Math.max(...ys) : 1;
    const padY = (yMax - yMin) * 0.08 || Math.abs(yMax) * 0.1 || 1;
    const padX = (xMax - xMin) * 0.04 || 1;
    // Quantities that cannot be negative (traffic, memory, trial numbers) get no axis below 0.
    const floorAt = (min, pad) => (min >= 0 ? Math.max(0, min - pad) : min - pad);
    const yTicks = niceTicks(floorAt(yMin, padY), yMax + padY, 5);
    const [x0, x1] = [floorAt(xMin, padX), xMax + padX];
    const xTicks = niceTicks(xMin, xMax, Math.max(2, Math.min(8, Math.floor(iw / 90)))).filter((t) => t >= x0 && t <= x1);
    const [y0, y1] = [yTicks[0], yTicks[yTicks.length - 1]];
    const x = (v) => m.left + ((v - x0) / (x1 - x0 || 1)) * iw;
    const y = (v) => m.top + ih - ((v - y0) / (y1 - y0 || 1)) * ih;
    // data-x0/data-y0: where the plotted axes start (tests check they are not below 0).
    const svg = s("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img", class: "chart-canvas", "data-x0": x0, "data-y0": y0 });
    const titleId = nextId("scatter-title");
    const descId = nextId("scatter-desc");
    svg.setAttribute("aria-labelledby", `${titleId} ${descId}`);
    svg.append(s("title", { id: titleId }, title || "Scatter chart"), s("desc", { id: descId }, description || ""));
    const yf = tickFormat(yTicks[1] - yTicks[0]);
    const xf = tickFormat(xTicks.length > 1 ? xTicks[1] - xTicks[0] : 1);
    for (const t of yTicks) {
      svg.append(
        s("line", { class: "grid", x1: m.left, x2: width - m.right, y1: y(t), y2: y(t) }),
        s("text", { class: "tick", x: m.left - 8, y: y(t), "text-anchor": "end", "dominant-baseline": "middle" }, yf(t)),
      );
    }
    for (const t of xTicks) {
      svg.append(s("text", { class: "tick", x: x(t), y: m.top + ih + 18, "text-anchor": "middle" }, xf(t)));
    }
    svg.append(s("line", { class: "axis", x1: m.left, x2: width - m.right, y1: m.top + ih, y2: m.top + ih }));
    if (xLabel) svg.append(s("text", { class: "axis-label", x: m.left + iw / 2, y: height - 4, "text-anchor": "middle" }, xLabel));
    if (yLabel) svg.append(s("text", { class: "axis-label", transform: `translate(13 ${m.top + ih / 2}) rotate(-90)`, "text-anchor": "middle" }, yLabel));
    if (step && step.length) {
      const d = step.map((p, i) => (i ? `H${x(p[0]).toFixed(1)}V${y(p[1]).toFixed(1)}` : `M${x(p[0]).toFixed(1)} ${y(p[1]).toFixed(1)}`)).join("") + `H${x(xMax).toFixed(1)}`;
      svg.append(s("path", { class: "line step", d, stroke: opts.stepColor || "var(--accent)" }));
    }
    for (const p of points) {
      if (!isNum(p.x) || !isNum(p.y)) continue;
      svg.append(s("circle", { class: "point", cx: x(p.x), cy: y(p.y), r: p.r || 4.5, fill: p.color || "var(--accent)" }, s("title", {}, p.label || `${p.x}, ${p.y}`)));
    }
    return svg;
  };
  return responsive(figure, holder, draw);
}

/** Points with ids of a series: [[x, y]...] from values, x scaled to iterations when known. */
export function seriesPoints(values, iterations) {
  const n = values.length;
  const scale = isNum(iterations) && n > 1 && iterations > n ? (iterations - 1) / (n - 1) : 1;
  return values.map((v, i) => [Math.round(i * scale), isNum(v) ? v : null]);
}
