// sparkpack dashboard: the Usage page (#/usage). Each team's cost over
// time, its share of the bill, what it ran and how long its jobs waited,
// and its budget (spent, left, held), from GET /api/v1/usage?by=team.
// It uses app.js's helpers ($, el, getJSON, apiFetch, lineChart, fmt*).
// Every user-supplied string reaches the page through textContent.
"use strict";

const USAGE_WINDOWS = { "24h": { ms: 864e5, step: "1h" }, "7d": { ms: 7 * 864e5, step: "6h" }, "30d": { ms: 30 * 864e5, step: "24h" } };
const USAGE_COLOURS = ["#0b63c4", "#c46a0b", "#2e8b57", "#7a3fc4", "#c42b4b", "#1f9fb0", "#8a6d00", "#5a6470"];
const USAGE_LINES = 7; // teams drawn in the chart; the rest summed as "other teams"
let usageTimer = null;

function usageTeamName(g) { return g === "" ? "(default)" : g; }

function usageQuery() {
  const w = USAGE_WINDOWS[$("usage-window").value] || USAGE_WINDOWS["24h"];
  const from = new Date(Math.floor((Date.now() - w.ms) / 60e3) * 60e3).toISOString().replace(/\.\d+Z$/, "Z");
  return "/api/v1/usage?by=team&step=" + w.step + "&from=" + encodeURIComponent(from);
}

// usageTotals sums the rows of each team over the window.
function usageTotals(rows) {
  const by = new Map();
  for (const r of rows) {
    const t = by.get(r.group) || { group: r.group, idle: !!r.idle, cost: 0, cpu: 0, mem: 0, jobs: {}, met: 0, missed: 0, started: 0, waitSum: 0, waitP90: null };
    t.cost += r.costUSD; t.cpu += r.cpuHours; t.mem += r.memoryGiBHours;
    for (const [k, v] of Object.entries(r.jobs || {})) t.jobs[k] = (t.jobs[k] || 0) + v;
    t.met += r.deadlineMet; t.missed += r.deadlineMissed;
    if (r.started) { t.started += r.started; t.waitSum += (r.waitMeanSeconds || 0) * r.started; }
    // The window's p90 cannot be rebuilt from the periods' p90s: show the
    // largest period p90 as an upper bound.
    if (r.waitP90Seconds !== undefined && r.waitP90Seconds !== null) t.waitP90 = Math.max(t.waitP90 || 0, r.waitP90Seconds);
    by.set(r.group, t);
  }
  return [...by.values()];
}

function usageChart(view, totals) {
  const teams = totals.filter((t) => !t.idle).sort((a, b) => b.cost - a.cost);
  const shown = new Set(teams.slice(0, USAGE_LINES).map((t) => t.group));
  // Every period's end, those without rows too (a team that spent
  // nothing in a period stays flat there).
  const start = Date.parse(view.from), stop = Date.parse(view.to), step = (view.stepSeconds || 0) * 1e3;
  const ends = [];
  for (let t = start + step; step > 0 && t < stop; t += step) ends.push(t);
  ends.push(stop);
  const series = new Map();
  const line = (key, name, colour) => {
    if (!series.has(key)) series.set(key, { name, colour, per: new Map() });
    return series.get(key);
  };
  teams.forEach((t, i) => { if (shown.has(t.group)) line(t.group, usageTeamName(t.group), USAGE_COLOURS[i % USAGE_COLOURS.length]); });
  for (const r of view.rows) {
    let s;
    if (r.idle) s = line("\u0000idle", "idle (no job)", "#8a8f96");
    else if (shown.has(r.group)) s = series.get(r.group);
    else s = line("\u0000other", "other teams", "#b0b7bf");
    const t = Date.parse(r.to);
    s.per.set(t, (s.per.get(t) || 0) + r.costUSD);
  }
  // Cumulative cost from the window's start.
  const out = [];
  for (const s of series.values()) {
    let sum = 0;
    const points = [[start, 0]];
    for (const t of ends) { sum += s.per.get(t) || 0; points.push([t, sum]); }
    out.push({ name: s.name, points, colour: s.colour });
  }
  lineChart($("usage-chart"), out, { fmt: fmtAxisUSD });
}

function usageTable(view, totals) {
  const total = totals.reduce((s, t) => s + t.cost, 0);
  const budgets = new Map((view.budgets || []).map((b) => [b.team, b]));
  const shares = new Map((view.shares || []).map((sh) => [sh.team, sh]));
  const rows = totals.sort((a, b) => (a.idle - b.idle) || (b.cost - a.cost)).map((t) => {
    const b = budgets.get(t.group);
    const ended = Object.values(t.jobs).reduce((s, n) => s + n, 0);
    const dl = t.met + t.missed;
    let budget = "–";
    if (b) {
      budget = fmtCost(b.spentUSD) + " of " + fmtUSD(b.budget.usd) + " per " + b.budget.period + (b.over ? " — over: " + (b.budget.action === "reject" ? "new jobs refused" : "new jobs held") : " — " + fmtCost(b.leftUSD) + " left");
    }
    return el("tr", { class: t.idle ? "idle" : b && b.over ? "over" : null, "data-team": t.group },
      el("th", { scope: "row" }, t.idle ? "idle (active agents beyond their jobs' shares)" : usageTeamName(t.group)),
      el("td", { class: "num" }, fmtCost(t.cost)),
      el("td", { class: "num" }, total > 0 ? (100 * t.cost / total).toFixed(1) + "%" : "–"),
      el("td", { class: "num", "data-col": "now" }, t.idle ? "–" : usageShareNow(shares.get(t.group))),
      el("td", { class: "num" }, t.idle ? "–" : t.cpu.toFixed(2)),
      el("td", { class: "num" }, t.idle ? "–" : t.mem.toFixed(2)),
      el("td", { class: "num" }, t.idle ? "–" : ended + (t.jobs.FAILED ? " (" + t.jobs.FAILED + " failed)" : "")),
      el("td", { class: "num" }, dl ? (100 * t.met / dl).toFixed(0) + "% (" + t.met + " of " + dl + ")" : "–"),
      el("td", { class: "num" }, t.started ? fmtDur(t.waitSum / t.started) + (t.waitP90 !== null ? " / " + fmtDur(t.waitP90) : "") : "–"),
      el("td", {}, budget));
  });
  // Budgeted teams that spent nothing in the window still show their budget.
  for (const [team, b] of budgets) {
    if (totals.some((t) => t.group === team && !t.idle)) continue;
    rows.push(el("tr", { "data-team": team }, el("th", { scope: "row" }, usageTeamName(team)),
      el("td", { class: "num" }, "$0"), el("td", { class: "num" }, "–"),
      el("td", { class: "num", "data-col": "now" }, usageShareNow(shares.get(team))),
      ...["–", "–", "–", "–", "–"].map((v) => el("td", { class: "num" }, v)),
      el("td", {}, fmtCost(b.spentUSD) + " of " + fmtUSD(b.budget.usd) + " per " + b.budget.period + " — " + fmtCost(b.leftUSD) + " left")));
  }
  // An empty window says so (not a table of headers alone).
  if (!rows.length) rows.push(el("tr", { class: "empty" }, el("td", { colspan: "10" }, "No usage in this window: no job held an agent, and no active agent cost anything. Pick a longer window, or submit a job.")));
  $("usage-table").querySelector("tbody").replaceChildren(...rows);
  $("usage-total").textContent = "Total " + fmtCost(total) + " from " + fmtTime(view.from) + " to " + fmtTime(view.to) +
    ": the teams and the idle remainder add up to the cost meter over the window.";
}

// usageShareNow: what a team's running jobs hold now against its
// guarantee (and maximum), from the teams file ("–" without one).
function usageShareNow(sh) {
  if (!sh) return "–";
  const now = sh.usingCpus === undefined || sh.usingCpus === null ? "?" : String(Math.round(sh.usingCpus * 10) / 10);
  let s = now + " cpus";
  if (sh.guaranteedCpus) s += " of " + sh.guaranteedCpus + " guaranteed";
  if (sh.maxCpus) s += " (max " + sh.maxCpus + ")";
  if (sh.guaranteedCpus && sh.usingCpus !== undefined && sh.usingCpus !== null) s += sh.usingCpus < sh.guaranteedCpus ? " — below its guarantee" : " — at or above its guarantee";
  return s;
}

async function renderUsage() {
  if ($("view-usage").hidden) return;
  let view;
  try { view = await getJSON(usageQuery()); }
  catch (e) {
    $("usage-error").hidden = false;
    $("usage-error").textContent = e.auth ? "Enter a token with the read scope to see usage." : "Usage unavailable: " + e.message;
    return;
  }
  $("usage-error").hidden = true;
  const totals = usageTotals(view.rows || []);
  usageChart(view, totals);
  usageTable(view, totals);
}

async function downloadUsageCSV() {
  try {
    const r = await apiFetch(usageQuery(), { headers: { Accept: "text/csv" } });
    const url = URL.createObjectURL(await r.blob());
    const a = el("a", { href: url, download: "sparkpack-usage-by-team.csv" });
    document.body.append(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10e3);
  } catch (e) { $("usage-error").hidden = false; $("usage-error").textContent = "CSV unavailable: " + e.message; }
}

function routeUsage() {
  const on = (location.hash || "").split("?")[0] === "#/usage";
  $("view-usage").hidden = !on;
  clearInterval(usageTimer);
  if (on) { renderUsage(); usageTimer = setInterval(renderUsage, 30e3); }
}

window.addEventListener("hashchange", routeUsage);
$("usage-window").addEventListener("change", renderUsage);
$("usage-csv").addEventListener("click", downloadUsageCSV);
routeUsage();
