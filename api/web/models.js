// sparkpack dashboard: the learned performance models (GET /api/v1/models).
// A panel on the overview draws, per job signature, the predicted run time
// against the executor count: the p50 line inside its p50-p90 band, with
// the runs, the level the prediction comes from and the honest error. The
// job page gets the predicted and actual run times (predictionFacts, called
// by app.js). Uses app.js's helpers (el, svgEl, getJSON, fmtDur, $); every
// user-supplied string goes through textContent.
"use strict";

const MODELS_MAX = 12; // signatures drawn; the rest are counted
const MODELS_EVERY = 15000; // ms between refreshes while the overview shows

// predictionFacts are the job page's facts about the job's predicted and
// actual run times (none when the API gave neither).
function predictionFacts(j) {
  const out = [];
  // predictedAt "start": the prediction the scheduler made at the run's
  // start (the one to compare the run with); "now": what the model
  // predicts today, which may have learned from this very run.
  const atStart = j.predictedAt === "start";
  const ended = j.state === "FINISHED" || j.state === "FAILED" || j.state === "KILLED";
  if (j.predictedSeconds > 0) {
    const lvl = { signature: "its signature's model", "app-type": "its application type's model", prior: "the prior (too few runs yet)", estimate: "its estimate, corrected by its signature's runs" }[j.predictionLevel] || "the model";
    const when = atStart ? "at its start" : j.predictedAt === "now" ? (ended || j.state === "RUNNING" ? "now, none kept from its start" : "now") : "";
    out.push(["predicted", fmtDur(j.predictedSeconds) + " (p90 " + fmtDur(j.predictedP90Seconds || j.predictedSeconds) + "; from " + lvl + (when ? ", " + when : "") + ")"]);
  }
  if (j.actualSeconds >= 0 && j.actualSeconds !== null && j.actualSeconds !== undefined) {
    let s = fmtDur(j.actualSeconds);
    // Compared only with the start's prediction (an older server sends no
    // predictedAt: compared as before).
    if (j.predictedSeconds > 0 && (atStart || !j.predictedAt)) {
      const d = 100 * (j.actualSeconds - j.predictedSeconds) / j.predictedSeconds;
      s += " (" + (d >= 0 ? "+" : "") + d.toFixed(0) + "% against the prediction" + (j.actualSeconds > (j.predictedP90Seconds || Infinity) ? ", beyond its p90" : "") + ")";
    } else if (j.predictedSeconds > 0) {
      s += " (not compared: no prediction was made at its start)";
    }
    out.push(["actual", s]);
  } else if (j.runTimeUnknown && j.state === "FINISHED") {
    // No actual run time, so no error against the prediction either.
    out.push(["actual", "unknown: never seen running (" + (j.predictedSeconds > 0 ? "not compared with the prediction, and " : "") + "not learned)"]);
  }
  return out;
}

// modelChart draws one signature's curve: executors on a log2 axis, run
// time from 0; the band is p50..p90.
function modelChart(m) {
  const W = 320, H = 170, L = 46, R = 8, T = 8, B = 30;
  const svg = svgEl("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "predicted run time against executors for " + m.signature });
  const pts = (m.curve || []).filter((p) => p.executors > 0 && p.p50Seconds >= 0);
  if (!pts.length) {
    const t = svgEl("text", { x: 10, y: 20 }); t.textContent = "no prediction yet"; svg.append(t);
    return svg;
  }
  const lx = (e) => Math.log2(e);
  const x0 = lx(pts[0].executors), x1 = Math.max(lx(pts[pts.length - 1].executors), x0 + 1);
  const y1 = Math.max(...pts.map((p) => p.p90Seconds || p.p50Seconds), 1) * 1.08;
  const X = (e) => L + (W - L - R) * (lx(e) - x0) / (x1 - x0), Y = (s) => H - B - (H - T - B) * s / y1;
  svg.append(svgEl("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#c5ccd3" }));
  svg.append(svgEl("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#c5ccd3" }));
  for (const v of [0, y1 / 2, y1]) {
    const t = svgEl("text", { x: L - 4, y: Y(v) + 4, "text-anchor": "end", class: "ylabel" }); t.textContent = fmtDur(v); svg.append(t);
  }
  for (const p of pts) {
    const t = svgEl("text", { x: X(p.executors), y: H - B + 13, "text-anchor": "middle", class: "xlabel" }); t.textContent = String(p.executors); svg.append(t);
  }
  const xt = svgEl("text", { x: (L + W - R) / 2, y: H - 3, "text-anchor": "middle", class: "xlabel" }); xt.textContent = "executors"; svg.append(xt);
  const upper = pts.map((p) => X(p.executors).toFixed(1) + "," + Y(p.p90Seconds || p.p50Seconds).toFixed(1));
  const lower = pts.slice().reverse().map((p) => X(p.executors).toFixed(1) + "," + Y(p.p50Seconds).toFixed(1));
  svg.append(svgEl("polygon", { points: upper.concat(lower).join(" "), fill: "#0b63c4", "fill-opacity": 0.15, stroke: "none", class: "model-band" }));
  svg.append(svgEl("path", { d: pts.map((p, i) => (i ? "L" : "M") + X(p.executors).toFixed(1) + "," + Y(p.p50Seconds).toFixed(1)).join(""), fill: "none", stroke: "#0b63c4", "stroke-width": 2, class: "model-p50" }));
  for (const p of pts) {
    const c = svgEl("circle", { cx: X(p.executors).toFixed(1), cy: Y(p.p50Seconds).toFixed(1), r: 3, fill: "#0b63c4", class: "model-point" });
    const tip = svgEl("title", {}); tip.textContent = plural(p.executors, "executor") + ": p50 " + fmtDur(p.p50Seconds) + ", p90 " + fmtDur(p.p90Seconds) + " (" + p.level + ")";
    c.append(tip); svg.append(c);
  }
  return svg;
}

function modelCard(m) {
  const err = m.mapePercent === undefined || m.mapePercent === null ? "error not measured yet" : "error " + m.mapePercent.toFixed(1) + "% (MAPE over " + plural(m.mapeRuns, "run") + ", each predicted before it was seen)";
  const lvl = m.level === "signature" ? "own model" : m.level === "app-type" ? "application type's model" : "prior";
  return el("figure", { class: "model", "data-model": m.id },
    el("figcaption", {},
      el("span", { class: "model-sig", title: m.signature }, m.signature),
      el("span", { class: "model-meta" }, plural(m.runs, "run") + " · " + lvl + (m.form ? " (" + m.form + ")" : "") + " · " + err)),
    modelChart(m));
}

let modelsTimer = null;
async function renderModels() {
  const panel = $("models-panel");
  if (!panel) return;
  let v;
  try { v = await getJSON("/api/v1/models"); }
  catch (e) { panel.hidden = true; return; } // not served here (no scheduler), or no token yet
  panel.hidden = false;
  const ms = v.models || [];
  $("models-summary").textContent = ms.length ? ms.length + (ms.length === 1 ? " signature" : " signatures") : "";
  const box = $("models");
  if (!ms.length) {
    box.replaceChildren(el("p", { class: "legend" }, "No models yet: sparkpack learns one per job signature (application + main class) from its finished runs whose run time it measured."));
    return;
  }
  // The most-run signatures first.
  const shown = ms.slice().sort((a, b) => b.runs - a.runs || (a.signature < b.signature ? -1 : 1)).slice(0, MODELS_MAX);
  box.replaceChildren(...shown.map(modelCard));
  if (ms.length > shown.length) box.append(el("p", { class: "legend" }, (ms.length - shown.length) + " more: sparkpack models lists them all"));
}
function modelsTick() {
  clearTimeout(modelsTimer);
  if (!$("view-overview").hidden) renderModels();
  modelsTimer = setTimeout(modelsTick, MODELS_EVERY);
}
document.addEventListener("DOMContentLoaded", () => {
  window.addEventListener("hashchange", () => { if (!$("view-overview").hidden) renderModels(); });
  modelsTick();
});
