// sparkpack dashboard: the forecast panel (GET /api/v1/forecast). The
// forecast band of arrivals per step (p10, p50, p90) next to the actual
// arrivals, and the agents the warm pool keeps on, with why. It uses
// app.js's helpers ($, el, getJSON, lineChart); every string reaches the
// page through textContent.
"use strict";

const FORECAST_EVERY_MS = 30000;

async function renderForecast() {
  const panel = $("forecast-panel");
  if (!panel || $("view-overview").hidden) return;
  let f;
  try { f = await getJSON("/api/v1/forecast?horizon=3h&step=15m"); } catch (e) { panel.hidden = true; return; }
  panel.hidden = false;
  const at = (s) => Date.parse(s.from);
  const lines = [
    { name: "forecast p90", points: f.steps.map((s) => [at(s), s.jobs.p90]), colour: "#b9c9de" },
    { name: "forecast p50", points: f.steps.map((s) => [at(s), s.jobs.p50]), colour: "#0b63c4" },
    { name: "forecast p10", points: f.steps.map((s) => [at(s), s.jobs.p10]), colour: "#b9c9de" },
    { name: "actual", points: f.steps.filter((s) => s.actual).map((s) => [at(s), s.actual.jobs]), colour: "#c46a0b" },
  ].filter((l) => f.model.ok || l.name === "actual"); // no model: its zeros are no forecast
  lineChart($("chart-forecast"), lines, { fmt: (v) => v.toFixed(v < 10 ? 1 : 0), minMax: 1 });
  const m = f.model;
  $("forecast-model").textContent = m.ok
    ? "Jobs arriving per 15 minutes, learned from " + m.jobs + " past submissions (profile by " + m.level + "; " +
      m.meanPerHour.toFixed(1) + "/h on average, " + m.recentPerHour.toFixed(1) + "/h lately; " + Math.round(100 * m.deadlineShare) + "% with a deadline)."
    : "No forecast: " + (m.reason || "no history") + ".";
  const w = f.warmPool, list = $("forecast-warm");
  if (!w) { list.replaceChildren(el("li", {}, "Power management is off: no warm pool.")); return; }
  const rows = [];
  // The warm pool decides every so often (a minute by default): its
  // agents and counts are as of its last decision, not of the cluster
  // panel's moment, and say so.
  if (Date.parse(w.at) > 0) rows.push(el("li", { class: "warm-at" }, "Last decided " + fmtTime(w.at) + "; as of then:"));
  if (w.fallback) rows.push(el("li", {}, w.fallback + " — idle agents power off after their idle timeout."));
  else rows.push(el("li", {}, w.reason));
  // Agents holding work stay on anyway: counted, not listed.
  const working = w.keepOn.filter((d) => d.reason === "holds work").length;
  for (const d of w.keepOn) if (d.reason !== "holds work") rows.push(el("li", { "data-agent": d.agentId }, el("strong", {}, d.name || d.agentId), " kept warm: " + d.reason));
  for (const d of w.powerOnNow) rows.push(el("li", { "data-agent": d.agentId }, el("strong", {}, d.name || d.agentId), " powered on ahead: " + d.reason));
  if (working) rows.push(el("li", {}, working + (working === 1 ? " agent holds" : " agents hold") + " work (on anyway)."));
  rows.push(el("li", {}, w.warmCPUs.toFixed(1) + " warm cpus; " + w.poweredOnAhead + " agents powered on ahead this term; a missed deadline priced at $" + w.config.missCostUSD));
  list.replaceChildren(...rows);
}

document.addEventListener("DOMContentLoaded", () => {
  renderForecast();
  setInterval(renderForecast, FORECAST_EVERY_MS);
  window.addEventListener("hashchange", () => setTimeout(renderForecast, 0));
});
