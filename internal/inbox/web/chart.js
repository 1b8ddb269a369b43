// The decisions chart: a stacked bar chart of decisions over time, drawn
// as inline SVG by hand (no library, nothing fetched). Each bar is one time
// bucket; its segments are the server/tool pairs (or the decisions) in it.
"use strict";

window.toolwardenChart = (function () {
  const NS = "http://www.w3.org/2000/svg";
  const W = 900, H = 260, L = 44, R = 200, T = 12, B = 34;
  const buckets = [60, 300, 900, 3600, 3 * 3600, 6 * 3600, 86400, 7 * 86400].map((s) => s * 1000);
  const decisionColors = { allow: "#2e8540", ask: "#c7860e", deny: "#c0392b", approved: "#2f6db5", expired: "#8e5a0b", revoked: "#6b4fa0", other: "#8a93a3" };
  const palette = ["#2f6db5", "#c7860e", "#2e8540", "#8e44ad", "#c0392b", "#16a085", "#d35400", "#8a93a3"];
  const MAX_GROUPS = 7;

  function svg(tag, attrs, text) {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function kindOf(d) { return d.decision; }

  // niceStep is the y-axis step: a whole 1, 2 or 5 times a power of ten,
  // so that four steps cover n.
  function niceStep(n) {
    const raw = Math.max(n / 4, 1);
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }

  function label(t, size) {
    const d = new Date(t);
    if (size >= 86400000) return d.toLocaleDateString();
    return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  }

  // render returns an <svg> for the decisions, stacked by "tool" (server/tool)
  // or "decision".
  function render(decisions, groupBy) {
    const times = decisions.map((d) => new Date(d.time).getTime()).filter((t) => !isNaN(t));
    const min = Math.min(...times), max = Math.max(...times);
    const size = buckets.find((b) => (max - min) / b <= 40) || buckets[buckets.length - 1];
    const start = Math.floor(min / size) * size;
    const n = Math.floor((max - start) / size) + 1;

    const keyOf = groupBy === "decision" ? kindOf : (d) => d.server + "/" + d.tool;
    const totals = new Map();
    for (const d of decisions) totals.set(keyOf(d), (totals.get(keyOf(d)) || 0) + 1);
    let groups = [...totals.entries()].sort((a, b) => b[1] - a[1]).map((e) => e[0]);
    const other = groups.length > MAX_GROUPS;
    if (other) groups = groups.slice(0, MAX_GROUPS - 1).concat(["other"]);
    const index = new Map(groups.map((g, i) => [g, i]));
    const colorOf = (g, i) => (groupBy === "decision" ? decisionColors[g] || decisionColors.other : g === "other" ? decisionColors.other : palette[i % palette.length]);

    const counts = Array.from({ length: n }, () => new Array(groups.length).fill(0));
    for (const d of decisions) {
      const t = new Date(d.time).getTime();
      if (isNaN(t)) continue;
      const b = Math.floor((t - start) / size);
      const g = index.has(keyOf(d)) ? index.get(keyOf(d)) : index.get("other");
      counts[b][g]++;
    }
    const step = niceStep(Math.max(...counts.map((c) => c.reduce((a, b) => a + b, 0))));
    const top = step * 4;

    const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "Decisions over time, stacked by " + (groupBy === "decision" ? "decision" : "server and tool"), "data-buckets": n, "data-groups": groups.length });
    const plotW = W - L - R, plotH = H - T - B;
    const y = (v) => T + plotH - (v / top) * plotH;
    for (let v = 0; v <= top; v += step) {
      root.append(svg("line", { class: "axis", x1: L, x2: L + plotW, y1: y(v), y2: y(v) }));
      root.append(svg("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end" }, v));
    }
    const bw = plotW / n;
    const every = Math.ceil(n / 8);
    for (let b = 0; b < n; b++) {
      let acc = 0;
      const x = L + b * bw + bw * 0.1;
      counts[b].forEach((c, g) => {
        if (!c) return;
        const rect = svg("rect", { x, y: y(acc + c), width: Math.max(bw * 0.8, 1), height: y(acc) - y(acc + c), fill: colorOf(groups[g], g), "data-group": groups[g], "data-count": c });
        rect.append(svg("title", {}, groups[g] + ": " + c + " at " + label(start + b * size, size)));
        root.append(rect);
        acc += c;
      });
      if (b % every === 0) root.append(svg("text", { x: L + b * bw + bw / 2, y: H - B + 16, "text-anchor": "middle" }, label(start + b * size, size)));
    }
    groups.forEach((g, i) => {
      const ly = T + 4 + i * 18;
      root.append(svg("rect", { x: W - R + 16, y: ly, width: 11, height: 11, fill: colorOf(g, i) }));
      root.append(svg("text", { x: W - R + 32, y: ly + 10 }, (g.length > 26 ? g.slice(0, 25) + "…" : g) + " (" + totals.get(g) + ")"));
    });
    if (other) {
      const rest = [...totals.entries()].filter(([k]) => !groups.includes(k)).reduce((a, [, v]) => a + v, 0);
      root.lastChild.textContent = "other (" + rest + ")";
    }
    root.append(svg("text", { x: L, y: H - 4 }, "each bar: " + (size >= 3600000 ? size / 3600000 + " h" : size / 60000 + " min")));
    return root;
  }

  return { render };
})();
