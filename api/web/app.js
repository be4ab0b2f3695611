// sparkpack dashboard. Plain JavaScript, no dependencies, works offline.
// Every user-supplied string reaches the page through textContent or an
// attribute set with setAttribute: never through innerHTML.
"use strict";

const STATES = ["SUBMITTED","QUEUED","PLACING","RESERVING","LAUNCHING","RUNNING","FINISHED","FAILED","KILLED","REJECTED","CANCELLED"];
const ENDED = new Set(["FINISHED","FAILED","KILLED","REJECTED","CANCELLED"]);
// OVERRUN is why a job without a deadline is at risk (scheduler/overrun.go).
const OVERRUN = "running past its p90 predicted run time";
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "style") e.style.cssText = v;
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) {
    if (c === undefined || c === null) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function svgEl(tag, attrs) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  return e;
}

// ---- the API token (kept in this tab's session storage) ----
const TOKEN_KEY = "sparkpack.token";
function token() { try { return sessionStorage.getItem(TOKEN_KEY) || ""; } catch (_) { return ""; } }
function setToken(t) {
  try { if (t) sessionStorage.setItem(TOKEN_KEY, t); else sessionStorage.removeItem(TOKEN_KEY); } catch (_) {}
  paintTokenButton();
}
function paintTokenButton() {
  const b = $("token-btn");
  b.classList.toggle("set", !!token());
  b.textContent = token() ? "Token ✓" : "Token";
  b.setAttribute("aria-label", token() ? "API token set; change or forget it" : "Enter an API token");
}
function showTokenForm(msg) {
  const f = $("token-form");
  f.hidden = false;
  $("token-btn").setAttribute("aria-expanded", "true");
  if (msg !== undefined) $("token-msg").textContent = msg;
  $("token-input").focus();
}
function hideTokenForm() { $("token-form").hidden = true; $("token-btn").setAttribute("aria-expanded", "false"); }

// apiFetch sends the token (if any); a refusal for want of a token (401,
// or 403 about the Authorization header) opens the token form.
async function apiFetch(path, opts) {
  opts = opts || {};
  const headers = Object.assign({ "Accept": "application/json" }, opts.headers || {});
  const t = token();
  if (t) headers["Authorization"] = "Bearer " + t;
  const r = await fetch(path, Object.assign({}, opts, { headers }));
  if (r.ok) return r;
  let body = {};
  try { body = await r.json(); } catch (_) {}
  const err = new Error(body.error || (r.status + " " + r.statusText));
  err.status = r.status; err.field = body.field || "";
  if (r.status === 401 || (r.status === 403 && err.field === "Authorization")) {
    err.auth = true;
    showTokenForm(t ? "The server refused this token: " + err.message : "This server needs a token: " + err.message);
  }
  throw err;
}
async function getJSON(path) { return (await apiFetch(path)).json(); }

const fmtUSD = (v) => "$" + (v || 0).toFixed(v >= 100 ? 0 : 2);
// fmtCost is a cost as an operator reads it, the same in the header and
// in the cost facts: cents, or, under a cent (and not zero), two
// significant digits ($0.0056, $0.00042; cents alone read a small demo's
// cost as $0.00 next to what it did cost).
const fmtCost = (v) => {
  v = v || 0;
  const a = Math.abs(v), sign = v < 0 ? "-$" : "$";
  if (a === 0 || a >= 0.01) return sign + a.toFixed(2);
  return sign + a.toFixed(Math.min(20, 1 - Math.floor(Math.log10(a)))).replace(/(\.\d\d\d*?)0+$/, "$1");
};
// An axis label: two significant digits below $1, so that the first
// seconds of a run (fractions of a cent) do not all read $0.000; in
// decimals, never in exponent notation ("$8.3e-7").
const fmtAxisUSD = (v) => "$" + (v >= 10 ? v.toFixed(0) : v >= 1 ? v.toFixed(2) : v > 0 ? v.toFixed(Math.min(20, 1 - Math.floor(Math.log10(v)))).replace(/0+$/, "").replace(/\.$/, "") : "0");
// fmtTime writes a moment as the CLI does: "2026-11-26 07:24:18 UTC", in
// the browser's zone with the zone named (not a locale's own order of day
// and month, which differs between readers).
const pad2 = (n) => String(n).padStart(2, "0");
const zoneName = (d) => (new Intl.DateTimeFormat("en-GB", { timeZoneName: "short" }).formatToParts(d).find((p) => p.type === "timeZoneName") || {}).value || "";
const fmtTime = (t) => {
  if (!t) return "–";
  const d = new Date(t);
  return d.getFullYear() + "-" + pad2(d.getMonth() + 1) + "-" + pad2(d.getDate()) + " " + pad2(d.getHours()) + ":" + pad2(d.getMinutes()) + ":" + pad2(d.getSeconds()) + " " + zoneName(d);
};
const fmtDur = (s) => {
  s = Math.round(s); const neg = s < 0; s = Math.abs(s);
  const h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60), sec = s % 60;
  return (neg ? "-" : "") + (h ? h + "h" : "") + (h || m ? m + "m" : "") + sec + "s";
};
// fmtMargin is a deadline's margin as the CLI tells it: under 10 s in
// tenths ("400ms", "1.5s", "<0.1s"), not a rounded "0s".
const fmtMargin = (s) => {
  if (s >= 10) return fmtDur(s);
  const ms = Math.round(s * 10) * 100;
  if (ms <= 0) return s > 0 ? "<0.1s" : "0s";
  return ms < 1000 ? ms + "ms" : ms / 1000 + "s";
};
// Milliseconds, readable below one: 0.043 ms is 43 µs.
const fmtMs = (v) => v >= 100 ? v.toFixed(0) + " ms" : v >= 1 ? v.toFixed(1) + " ms" : v >= 0.001 ? (v * 1000).toFixed(v >= 0.01 ? 0 : 1) + " µs" : "0";
// plural is n and the noun, plural unless n is 1 ("1 run", "2 runs"), as
// the CLI's internal/plural writes counts.
const plural = (n, noun) => n + " " + noun + (n === 1 ? "" : "s");
const fmtMiB = (mb) => mb >= 1024 ? (mb / 1024).toFixed(mb % 1024 ? 1 : 0) + " GiB" : mb + " MiB";
function jobColour(id) {
  let h = 0; for (const c of String(id)) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return "hsl(" + (h % 360) + " 62% 52%)";
}
const jobLabel = (j) => j.name ? j.name : String(j.id || j.jobId || "").slice(0, 8);
const agentName = (p) => p.hostname || p.agentId || "";

// ---- tooltip for executor blocks (hover and keyboard focus) ----
function attachTip(node, text) {
  const tip = $("tooltip");
  const show = () => {
    tip.textContent = text; tip.hidden = false;
    const r = node.getBoundingClientRect();
    tip.style.left = Math.max(4, Math.min(r.right + 6, window.innerWidth - 310)) + "px";
    tip.style.top = Math.max(r.top, 4) + "px";
  };
  const hide = () => { tip.hidden = true; };
  node.addEventListener("mouseenter", show); node.addEventListener("focus", show);
  node.addEventListener("mouseleave", hide); node.addEventListener("blur", hide);
}

// ---- cluster ----
async function renderCluster() {
  const box = $("cluster");
  let data;
  try { data = await getJSON("/api/v1/cluster"); }
  catch (e) { box.replaceChildren(el("p", { class: "empty" }, e.status === 404 ? "No cluster view in this server." : e.auth ? "Enter a token to see the cluster." : "Cluster unavailable: " + e.message)); return; }
  const agents = data.agents || [];
  let active = 0;
  const legend = new Map(); // job id -> name, in the order first seen
  const cards = agents.map((a) => {
    if (a.state === "active") active++;
    const bar = (kind, total) => {
      const b = el("div", { class: "bar", "aria-label": kind + " of " + a.hostname });
      b.append(el("span", { class: "label" }, kind));
      const add = (jobId, amount, text, cls) => {
        if (!total || !amount) return;
        const blk = el("div", { class: "block" + (cls ? " " + cls : ""), tabindex: 0, role: "link", "aria-label": text + " (opens the job)", "data-job": jobId,
          style: "height:" + Math.max(1, 100 * amount / total).toFixed(2) + "%;background-color:" + jobColour(jobId) });
        attachTip(blk, text + " — click to open the job");
        // A block opens its job (click, or Enter on the focused block).
        const open = () => { location.hash = "#/jobs/" + encodeURIComponent(jobId); };
        blk.addEventListener("click", open);
        blk.addEventListener("keydown", (ev) => { if (ev.key === "Enter") open(); });
        if (!legend.has(jobId)) legend.set(jobId, text.startsWith("driver of job ") ? text.slice(14).split(":")[0] : text.slice(4).split(":")[0]);
        b.append(blk);
      };
      for (const r of a.reservations || []) {
        add(r.jobId, kind === "cpus" ? r.cpus : r.memMB, "job " + (r.jobName || r.jobId) + ": " + r.executors + " executor(s), " + r.cpus + " cpus, " + fmtMiB(r.memMB) + " reserved on " + a.hostname);
      }
      for (const d of a.drivers || []) {
        add(d.jobId, kind === "cpus" ? d.cpus : d.memMB, "driver of job " + (d.jobName || d.jobId) + ": " + d.cpus + " cpus, " + fmtMiB(d.memMB) + " on " + a.hostname, "driver");
      }
      return b;
    };
    const st = a.state || "idle";
    // Power management's state (on, draining, powering-off, off, booting)
    // shows when it differs from what the agent's work says.
    const pw = a.power && a.power !== "on" ? a.power : "";
    const label = pw || st;
    return el("article", { class: "agent " + st + (pw ? " power-" + pw : ""), role: "listitem", "data-agent": a.id, "data-host": a.hostname, "data-power": a.power || "", "data-drivers": (a.drivers || []).length, "aria-label": "agent " + a.hostname + ", " + label },
      el("header", {}, el("span", { class: "host", title: "Mesos agent id " + a.id }, a.hostname), el("span", { class: "badge " + (pw ? "power-" + pw : st) }, label)),
      el("div", { class: "bars" }, bar("cpus", a.cpus), bar("mem", a.memMB)),
      el("footer", {}, (a.instanceType || (a.attributes || {}).instance_type || "") + " · " + a.cpus + " cpu · " + Math.round(a.memMB / 1024) + " GiB · $" + (a.pricePerHour || 0) + "/h · " + (a.location || "")));
  });
  box.replaceChildren(...cards);
  // The legend: which colour is which job (each links to the job).
  $("cluster-legend").replaceChildren(...[...legend].map(([id, name]) =>
    el("a", { class: "legend-job", href: "#/jobs/" + encodeURIComponent(id), "data-job": id },
      el("span", { class: "swatch", style: "background-color:" + jobColour(id), "aria-hidden": "true" }), name)));
  $("cluster-legend").hidden = legend.size === 0;
  const off = agents.filter((a) => a.power === "off").length;
  // A large cluster comes a page at a time (GET /api/v1/cluster?limit=&cursor=); the summary counts every agent.
  const sum = data.summary, shown = sum && sum.agents > agents.length ? " (first " + agents.length + " shown)" : "";
  // Agents being powered on for waiting jobs count apart from those off (docs/power.md).
  const booting = sum && sum.byPower ? sum.byPower.booting || 0 : agents.filter((a) => a.power === "booting").length;
  $("cluster-summary").textContent = (sum
    ? sum.agents + " agents, " + sum.byState.active + " active" + (sum.byPower ? ", " + (sum.byPower.off || 0) + " powered off" : "") + shown
    : agents.length + " agents, " + active + " active" + (agents.some((a) => a.power) ? ", " + off + " powered off" : "")) + (booting ? ", " + booting + " booting" : "");
}

// ---- queues ----
// queueItem is one waiting job; team, when given (a fair-share regular
// queue), is its team ("" the default team).
function queueItem(j, deadline, team) {
  const li = el("li", { "data-job": j.id });
  li.append(el("a", { href: "#/jobs/" + encodeURIComponent(j.id) }, jobLabel(j)));
  if (team !== undefined) li.append(" · ", el("span", { class: "team" }, "team " + (team || "(default)")));
  li.append(" · " + j.executors + " × " + j.executorCores + " cpu");
  if (deadline) {
    li.append(" · due " + fmtTime(j.deadlineAt));
    if (j.slackSeconds !== undefined && j.slackSeconds !== null) li.append(" · slack " + fmtDur(j.slackSeconds));
    if (j.atRisk) li.append(" ", el("span", { class: "atrisk" }, "at risk"));
  }
  if (j.preemptions) li.append(" ", el("span", { class: "preempted", title: "evicted for deadline jobs; it runs again from scratch" }, "preempted ×" + j.preemptions));
  // A job that will miss waiting: the structured line below replaces the
  // reason's words about it (and links the jobs evicted for it).
  const willMiss = j.preemption && j.preemption.willMiss;
  let reason = j.waitingReason || "";
  const cut = willMiss ? reason.indexOf("will miss its deadline waiting") : -1;
  if (cut > 0) reason = reason.slice(0, cut).replace(/[;:,\s]+$/, "");
  if (reason) li.append(el("span", { class: "reason" }, reason));
  if (willMiss) li.append(preemptionLine(j.preemption));
  return li;
}
// preemptionLine says why a deadline job will miss waiting and which running
// jobs are (or would be) evicted for it, each a link to its page.
function preemptionLine(p) {
  const line = el("span", { class: "preemption" });
  const links = (ids) => ids.flatMap((id, i) => [i ? ", " : "", el("a", { href: "#/jobs/" + encodeURIComponent(id) }, id.slice(0, 8))]);
  line.append("will miss its deadline waiting: latest start " + fmtTime(p.latestStart) + ", room expected " + (p.roomExpectedAt ? fmtTime(p.roomExpectedAt) : "never") + " — ");
  if (p.evicting && p.evicting.length) line.append("evicting ", ...links(p.evicting), " (" + p.policy + ")");
  else if (p.wouldEvict && p.wouldEvict.length) line.append("would evict ", ...links(p.wouldEvict), " (" + p.policy + "), but " + p.blocked);
  else if (!p.policy || p.policy === "none") line.append("preemption is off");
  else line.append(p.blocked || "no job can be evicted");
  return line;
}
const REGULAR_ORDER = {
  demand: "largest demand first",
  fifo: "first submitted first",
  "fair-share": "team by team in the fair share between teams, each team's largest demand first",
  "fair-share-fifo": "team by team in the fair share between teams, each team's first submitted first",
};
async function renderQueues() {
  let q;
  try { q = await getJSON("/api/v1/queues"); }
  catch (e) { for (const id of ["queue-deadline", "queue-regular"]) $(id).replaceChildren(el("li", { class: "empty" }, e.auth ? "enter a token to see the queues" : "unavailable")); return; }
  const fair = q.regularOrder === "fair-share";
  const fill = (id, jobs, deadline) => $(id).replaceChildren(...(jobs && jobs.length ? jobs.map((j) => queueItem(j, deadline, !deadline && fair ? (j.team || "") : undefined)) : [el("li", { class: "empty" }, "empty")]));
  fill("queue-deadline", q.deadline, true);
  fill("queue-regular", q.regular, false);
  // How the regular queue is ordered, and with teams in which order the
  // pass offers them the room (and what that order means).
  $("regular-order").textContent = "(" + (fair && q.withinTeam === "fifo" ? REGULAR_ORDER["fair-share-fifo"] : REGULAR_ORDER[q.regularOrder] || REGULAR_ORDER.demand) + ")";
  const teams = $("regular-teams");
  teams.hidden = !fair || !(q.teams && q.teams.length);
  if (!teams.hidden) {
    teams.replaceChildren("Teams offered the room in this order, as they stand now: ",
      ...q.teams.flatMap((t, i) => [i ? ", " : "", el("span", { class: "team-rank", "data-team": t.team },
        (t.team || "(default)") + " (" + (t.belowGuarantee ? "below its guarantee, " + t.share.toFixed(2) + " of it held" : "weighted share " + t.share.toFixed(2)) + "; " + t.jobs + (t.jobs === 1 ? " job" : " jobs") + ")")]),
      ". This is the order the next pass tries them until one starts: a start ranks its team again, and that team's later jobs may then go after other teams'.");
  }
  // The API sends the first page (100 jobs) and the full lengths.
  const t = q.totals || { deadline: (q.deadline || []).length, regular: (q.regular || []).length, intake: 0 };
  $("total-deadline").textContent = "(" + t.deadline + ")";
  $("total-regular").textContent = "(" + t.regular + ")";
  const shown = (q.deadline || []).length + (q.regular || []).length, total = t.deadline + t.regular;
  const more = $("queue-more");
  more.hidden = shown >= total && !t.intake;
  more.textContent = "Showing the first " + shown + " of " + total + " waiting jobs" + (t.intake ? "; " + t.intake + " more being admitted" : "") + ".";
}

// ---- charts: a time axis, a value axis and a legend ----
function timeTicks(x0, x1) {
  const span = x1 - x0;
  const steps = [1e3, 5e3, 10e3, 15e3, 30e3, 60e3, 120e3, 300e3, 600e3, 900e3, 1800e3, 3600e3, 7200e3, 21600e3, 43200e3, 86400e3];
  let step = steps[steps.length - 1];
  for (const s of steps) if (span / s <= 5) { step = s; break; }
  const out = [];
  for (let t = Math.ceil(x0 / step) * step; t <= x1; t += step) out.push(t);
  return { ticks: out, seconds: step < 60e3 };
}
function lineChart(box, series, opts) {
  const W = 600, H = opts.height || 180, R = 8, T = 8, B = 22;
  let L = 58;
  const svg = svgEl("svg", { viewBox: "0 0 " + W + " " + H });
  const keys = el("div", { class: "keys" }, ...series.map((s) => el("span", { class: "key", style: "--c:" + s.colour }, s.name)));
  if (!series.length || !series.some((s) => s.points.length)) {
    const t = svgEl("text", { x: 10, y: 20 }); t.textContent = "no data yet"; svg.append(t);
    box.replaceChildren(keys, svg); return;
  }
  const xs = [], ys = [];
  for (const s of series) for (const p of s.points) { xs.push(p[0]); ys.push(p[1]); }
  const x0 = Math.min(...xs), x1 = Math.max(...xs, x0 + 1000);
  let y1 = Math.max(...ys, opts.minMax || 1e-9) * 1.05;
  // A count (opts.integer) is labelled in whole numbers: the top is even,
  // so that the middle label is whole too (not "1", "1", "0").
  if (opts.integer) y1 = Math.max(2, 2 * Math.ceil(y1 / 2));
  // The value axis is as wide as its longest label (a cost in the first
  // seconds reads "$0.000017"): a label is not cut at the chart's left edge.
  const yLabels = [0, y1 / 2, y1].map((v) => [v, opts.fmt(v)]);
  L = Math.max(L, 10 + 7 * Math.max(...yLabels.map(([, t]) => t.length)));
  const X = (x) => L + (W - L - R) * (x - x0) / (x1 - x0), Y = (y) => H - B - (H - T - B) * y / y1;
  svg.append(svgEl("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#c5ccd3" }));
  svg.append(svgEl("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#c5ccd3" }));
  for (const [v, label] of yLabels) {
    const y = Y(v);
    if (v > 0) svg.append(svgEl("line", { x1: L, y1: y, x2: W - R, y2: y, stroke: "#eef1f4" }));
    const t = svgEl("text", { x: L - 4, y: y + 4, "text-anchor": "end", class: "ylabel" }); t.textContent = label; svg.append(t);
  }
  const tt = timeTicks(x0, x1);
  for (const x of tt.ticks) {
    svg.append(svgEl("line", { x1: X(x), y1: H - B, x2: X(x), y2: H - B + 4, stroke: "#c5ccd3" }));
    // A label near an end of the axis is anchored there, not cut off.
    const anchor = X(x) > W - R - 45 ? "end" : X(x) < L + 30 ? "start" : "middle";
    const t = svgEl("text", { x: X(x), y: H - 6, "text-anchor": anchor, class: "xlabel" });
    // 24-hour local time, as fmtTime writes it (not a locale's AM/PM).
    const d = new Date(x);
    t.textContent = pad2(d.getHours()) + ":" + pad2(d.getMinutes()) + (tt.seconds ? ":" + pad2(d.getSeconds()) : "");
    svg.append(t);
  }
  for (const s of series) {
    if (!s.points.length) continue;
    const d = s.points.map((p, i) => (i ? "L" : "M") + X(p[0]).toFixed(1) + "," + Y(p[1]).toFixed(1)).join("");
    svg.append(svgEl("path", { d, fill: "none", stroke: s.colour, "stroke-width": 2 }));
    if (s.points.length < 30) for (const p of s.points) svg.append(svgEl("circle", { cx: X(p[0]).toFixed(1), cy: Y(p[1]).toFixed(1), r: 2.5, fill: s.colour }));
  }
  box.replaceChildren(keys, svg);
}
async function renderCost() {
  let c;
  try { c = await getJSON("/api/v1/cost"); } catch (e) { return; }
  // The header's figures as the facts below show them (fmtCost).
  $("total-cost").textContent = fmtCost(c.totalUSD);
  $("burn-rate").textContent = fmtCost(c.burnRateUSDPerHour) + "/h";
  // The provider's bill (the emulator's, in the demo) next to the meter.
  const bill = $("bill");
  bill.hidden = !c.bill;
  if (c.bill) $("bill-total").textContent = fmtCost(c.bill.totalUSD) + " (always on: " + fmtCost(c.bill.alwaysOnUSD) + ")";
  if ($("view-overview").hidden) return;
  const pts = (c.series || []).map((p) => [Date.parse(p.t), p.totalUSD]);
  const st = c.stats || [];
  const lines = [{ name: "meter: agents holding work", points: pts, colour: "#0b63c4" }];
  const billPts = st.filter((p) => p.billUSD !== undefined);
  if (billPts.length) {
    lines.push({ name: "bill: agents powered on", points: billPts.map((p) => [Date.parse(p.t), p.billUSD]), colour: "#c46a0b" });
    lines.push({ name: "always on", points: billPts.map((p) => [Date.parse(p.t), p.alwaysOnUSD]), colour: "#8a8f96" });
  }
  lineChart($("chart-cost"), lines, { fmt: fmtAxisUSD });
  // What each figure is, and what power management saved.
  const facts = [["meter", fmtCost(c.totalUSD) + " — what the agents holding sparkpack's reservations or drivers cost while they did (the jobs' own costs are their shares of it; the rest is capacity of those agents no job used)"]];
  if (c.jobsUSD !== undefined && c.idleUSD !== undefined) facts.push(["jobs", fmtCost(c.jobsUSD) + " — the jobs' costs summed (each job's dominant share of the agents it held)"], ["idle", fmtCost(c.idleUSD) + " — the rest of the meter: jobs + idle = meter"]);
  if (c.bill) {
    const saved = c.bill.alwaysOnUSD - c.bill.totalUSD;
    facts.push(["bill", fmtCost(c.bill.totalUSD) + " — every agent while it was powered on, idle time before power-off and boot time included"]);
    facts.push(["always on", fmtCost(c.bill.alwaysOnUSD) + " — the same agents, none ever off, over the same " + fmtDur(c.bill.seconds)]);
    facts.push(["saved", fmtCost(saved) + (c.bill.alwaysOnUSD > 0 ? " (" + (100 * saved / c.bill.alwaysOnUSD).toFixed(1) + "% of always on)" : "")]);
  }
  $("cost-explain").replaceChildren(...facts.flatMap(([k, v]) => [el("dt", {}, k), el("dd", { "data-fact": k }, v)]));
  const d = c.deadlines;
  $("deadline-counts").hidden = !d;
  if (d) {
    const trend = (now, before) => now > before ? "▲" : now < before ? "▼" : "=";
    $("deadline-counts").textContent = "Deadlines: " + d.met + " met, " + d.missed + " missed" +
      " · last hour " + d.metLastHour + " met, " + d.missedLastHour + " missed (" + trend(d.missedLastHour, d.missedHourBefore) + " misses against the hour before: " + d.missedHourBefore + ")";
  }
  lineChart($("chart-latency"), [{ name: "mean time to place a job", points: st.filter((p) => p.placementMs > 0).map((p) => [Date.parse(p.t), p.placementMs]), colour: "#7a3fc4" }], { height: 120, fmt: fmtMs });
  lineChart($("chart-queue"), [
    { name: "deadline queue", points: st.map((p) => [Date.parse(p.t), p.deadlineQueue]), colour: "#b3261e" },
    { name: "regular queue", points: st.map((p) => [Date.parse(p.t), p.regularQueue]), colour: "#1e7b34" },
    { name: "active agents", points: st.map((p) => [Date.parse(p.t), p.activeAgents]), colour: "#8a8f96" }], { height: 120, fmt: (v) => String(Math.round(v)), integer: true });
}

// ---- jobs table ----
let jobsNext = "", jobsRows = [];
// ranSeconds is how long the job has run (or ran); null when it never
// started, or when its last run ended before its driver was seen running
// (runTimeUnknown: its start is only its launch; ranText says so).
function ranSeconds(j) {
  if (!j.startedAt || j.runTimeUnknown) return null;
  const end = j.finishedAt ? Date.parse(j.finishedAt) : Date.now();
  return Math.max(0, (end - Date.parse(j.startedAt)) / 1000);
}
// UNSEEN explains a run time that is not known.
const UNSEEN = "the driver ended before sparkpack saw it running, so how long it ran is not known";
function ranText(j) {
  if (j.runTimeUnknown) return el("span", { class: "unknown", title: UNSEEN }, "unknown");
  const ran = ranSeconds(j);
  return ran === null ? "–" : fmtDur(ran);
}
// deadlineText: met or missed only for jobs that ran; a job CANCELLED or
// REJECTED before it ran did not miss anything.
function deadlineText(j) {
  // A job without a deadline is at risk when it runs past its p90
  // predicted run time: shown where a deadline job's at-risk is.
  if (!j.deadlineAt) return { text: "–", risk: !!j.atRisk && !ENDED.has(j.state), riskWhy: OVERRUN };
  const due = Date.parse(j.deadlineAt);
  if (j.state === "FINISHED" && j.finishedAt) {
    const late = Date.parse(j.finishedAt) - due;
    return late <= 0 ? { text: "met by " + fmtMargin(-late / 1000), cls: "met" } : { text: "missed by " + fmtMargin(late / 1000), cls: "missed" };
  }
  if ((j.state === "FAILED" || j.state === "KILLED") && j.finishedAt && Date.parse(j.finishedAt) > due) return { text: "missed", cls: "missed" };
  if (ENDED.has(j.state)) return { text: "not run (" + j.state.toLowerCase() + ")", cls: "notrun" };
  return { text: "due " + fmtTime(j.deadlineAt), risk: j.atRisk };
}
// waitedSeconds is how long a job waited in the queue, summed over its
// waits (queuedSeconds, plus the time since queuedSince when it waits
// now: a failed run or a lost launch is not waiting); null for one that
// never waited in a queue. From a server without queuedSeconds, the time
// from submission to its (last) start.
function waitedSeconds(j) {
  if (j.queuedSeconds !== undefined && j.queuedSeconds !== null) {
    return j.queuedSeconds + (j.queuedSince ? Math.max(0, (Date.now() - Date.parse(j.queuedSince)) / 1000) : 0);
  }
  const start = j.lastStartedAt || j.startedAt;
  const sub = Date.parse(j.submittedAt);
  if (start) return Math.max(0, (Date.parse(start) - sub) / 1000);
  if (ENDED.has(j.state)) return j.finishedAt ? Math.max(0, (Date.parse(j.finishedAt) - sub) / 1000) : null;
  return Math.max(0, (Date.now() - sub) / 1000);
}
function resources(j) {
  return j.executors + " × " + j.executorCores + " cpu, " + fmtMiB(j.executorMemoryMB);
}
function jobRow(j) {
  const waited = waitedSeconds(j);
  const placed = (j.placement || []).slice().sort((a, b) => agentName(a).localeCompare(agentName(b), undefined, { numeric: true }));
  const agents = placed.map((p) => el("span", { class: "agentname", title: "Mesos agent id " + p.agentId + ": " + p.executors + " executor(s)" }, agentName(p)));
  const dl = deadlineText(j);
  // data-label names each cell for the narrow (stacked) layout.
  return el("tr", { "data-job": j.id },
    el("td", { "data-label": "Name" }, el("a", { href: "#/jobs/" + encodeURIComponent(j.id) }, jobLabel(j))),
    el("td", { "data-label": "State" }, el("span", { class: "state " + j.state }, j.state)),
    el("td", { "data-label": "Submitted" }, fmtTime(j.submittedAt)),
    el("td", { class: "waited", "data-label": "Waited" }, waited === null ? "–" : fmtDur(waited)),
    el("td", { class: "ran", "data-label": "Ran" }, ranText(j)),
    el("td", { class: "resources", "data-label": "Resources" }, resources(j)),
    el("td", { class: "deadline", "data-label": "Deadline" }, dl.cls ? el("span", { class: dl.cls }, dl.text) : dl.text, dl.risk ? el("span", { class: "atrisk", title: dl.riskWhy || "at risk of missing its deadline" }, " at risk") : null),
    el("td", { class: "cost", "data-label": "Cost" }, j.costUSD === undefined || j.costUSD === null ? "–" : fmtCost(j.costUSD)),
    el("td", { class: "agentlist", "data-label": "Agents" }, ...(agents.length ? agents : ["–"])));
}
// The jobs page's filter lives in the URL (#/jobs?q=...&state=...&sort=...),
// so that a filtered list can be shared and survives a reload; the search
// runs on the server over every job (GET /api/v1/jobs?q=), the sort orders
// the rows loaded.
function jobsQuery() {
  const h = location.hash, i = h.indexOf("?");
  return new URLSearchParams(i < 0 ? "" : h.slice(i + 1));
}
function setJobsQuery(changes) {
  const q = jobsQuery();
  for (const [k, v] of Object.entries(changes)) { if (v) q.set(k, v); else q.delete(k); }
  const qs = q.toString();
  location.replace("#/jobs" + (qs ? "?" + qs : ""));
}
const SORTS = {
  name: (j) => jobLabel(j).toLowerCase(), state: (j) => j.state, submitted: (j) => Date.parse(j.submittedAt),
  waited: (j) => waitedSeconds(j) ?? -1, ran: (j) => ranSeconds(j) ?? -1, cost: (j) => j.costUSD ?? -1,
};
function sortedRows() {
  const key = jobsQuery().get("sort") || "";
  const desc = key.startsWith("-"), f = SORTS[desc ? key.slice(1) : key];
  if (!f) return jobsRows;
  return jobsRows.slice().sort((a, b) => { const x = f(a), y = f(b); return (x < y ? -1 : x > y ? 1 : 0) * (desc ? -1 : 1); });
}
function paintJobs() {
  const key = jobsQuery().get("sort") || "";
  for (const th of document.querySelectorAll("#jobs-table th[data-sort]")) {
    const k = th.dataset.sort;
    th.setAttribute("aria-sort", key === k ? "ascending" : key === "-" + k ? "descending" : "none");
  }
  const rows = sortedRows().map(jobRow), q = jobsQuery();
  if (!rows.length && $("jobs-error").hidden) rows.push(el("tr", { class: "empty" }, el("td", { colspan: "9" }, q.get("state") || q.get("q") ? "No job matches this search or state; clear them to see every job." : "No jobs yet: submit one with sparkpack submit, spark-submit or POST /api/v1/jobs.")));
  $("jobs-table").tBodies[0].replaceChildren(...rows);
  $("jobs-more").hidden = !jobsNext;
}
async function loadJobs(more) {
  const q = jobsQuery();
  const st = q.get("state") || "", search = q.get("q") || "";
  if ($("job-state").value !== st) $("job-state").value = st;
  if (document.activeElement !== $("job-search") && $("job-search").value !== search) $("job-search").value = search;
  let url = "/api/v1/jobs?limit=100" + (st ? "&state=" + encodeURIComponent(st) : "") + (search ? "&q=" + encodeURIComponent(search) : "");
  if (more && jobsNext) url += "&cursor=" + encodeURIComponent(jobsNext);
  const errBox = $("jobs-error");
  try {
    const r = await getJSON(url);
    jobsRows = more ? jobsRows.concat(r.jobs) : r.jobs; jobsNext = r.next;
    errBox.hidden = true;
  } catch (e) {
    jobsRows = []; jobsNext = "";
    errBox.hidden = false;
    errBox.textContent = e.auth ? "This server needs a token to list jobs: use the Token button above." : "Jobs unavailable: " + e.message;
  }
  paintJobs();
}
let searchTimer = null;

// ---- one job ----
let currentJob = "", currentState = "", currentName = "";
// commandPairs turns a spark-submit argument vector into rows: the
// program, then each --flag with its value (or alone), then the rest.
function commandPairs(argv) {
  const rows = [["program", argv[0]]];
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith("--") && a !== "--verbose" && a !== "--supervise" && i + 1 < argv.length && !argv[i + 1].startsWith("--")) {
      rows.push([a, argv[i + 1]]); i++;
    } else if (a.startsWith("--")) {
      rows.push([a, ""]);
    } else {
      rows.push([rows.some((r) => r[0] === "application") ? "argument" : "application", a]);
    }
  }
  return rows;
}
function clearJob(message) {
  $("h-job").textContent = "Job not found";
  $("job-facts").replaceChildren(el("dt", {}, "error"), el("dd", { class: "error" }, message));
  $("job-placement").tBodies[0].replaceChildren();
  $("job-command").tBodies[0].replaceChildren();
  $("job-events").replaceChildren();
  $("job-log").hidden = true; $("job-log").textContent = ""; $("job-log-msg").textContent = ""; $("job-log-links").replaceChildren();
  $("job-details").hidden = true;
  $("job-confirm").hidden = true;
  $("job-cancel-msg").textContent = "";
}
async function renderJob(id) {
  if (id !== currentJob) { $("job-confirm").hidden = true; $("job-cancel-msg").textContent = ""; }
  currentJob = id;
  let j;
  try { j = await getJSON("/api/v1/jobs/" + encodeURIComponent(id)); }
  catch (e) {
    if (id !== currentJob) return;
    clearJob(e.status === 404 ? "No job " + id + " on this server." : e.auth ? "Enter a token to see this job." : e.message);
    return;
  }
  if (id !== currentJob) return;
  $("job-details").hidden = false;
  currentState = j.state; currentName = jobLabel(j);
  $("h-job").textContent = "Job " + jobLabel(j);
  const dl = deadlineText(j);
  // A run never seen running: its start is its launch, or its end.
  const started = fmtTime(j.startedAt) + (j.runTimeUnknown && j.startedAt ? (j.startedAt === j.finishedAt ? " (its end: never seen running)" : " (its launch: never seen running)") : "");
  const facts = [["id", j.id], ["state", j.state], ["submitted", fmtTime(j.submittedAt)], ["started", started],
    ["finished", fmtTime(j.finishedAt)], ["waited", waitedSeconds(j) === null ? "–" : fmtDur(waitedSeconds(j))],
    ["ran", j.runTimeUnknown ? "unknown (" + UNSEEN + ")" : ranText(j)],
    ["deadline", j.deadlineAt ? fmtTime(j.deadlineAt) + (dl.cls ? " (" + dl.text + ")" : j.atRisk ? " (at risk)" : "") : "none" + (dl.risk ? " (at risk: " + OVERRUN + ")" : "")],
    ["executors", j.executors + " × (" + j.executorCores + " cpu, " + fmtMiB(j.executorMemoryMB) + ")"],
    ["cost", j.costUSD === undefined || j.costUSD === null ? "–" : fmtCost(j.costUSD)],
    ["main class", j.app && j.app.mainClass], ["application", j.app && j.app.appResource],
    ["labels", Object.entries(j.labels || {}).map(([k, v]) => k + "=" + v).join(", ") || "none"]];
  if (j.team) facts.splice(1, 0, ["team", j.team]);
  if (j.sizing && j.sizing.auto && j.sizing.reason) facts.push(["sized", j.sizing.reason]);
  if (j.retries) facts.push(["retries", String(j.retries)]);
  if (j.waitingReason) facts.push(["waiting because", j.waitingReason]);
  if (j.preemptions) facts.push(["preempted", j.preemptions + (j.preemptions === 1 ? " time" : " times") + ", " + fmtDur(j.lostWorkSeconds || 0) + " of work lost"]);
  if (j.preemptRequested) facts.push(["being evicted", j.preemptRequested]);
  if (typeof predictionFacts === "function") facts.push(...predictionFacts(j)); // models.js
  $("job-facts").replaceChildren(...facts.flatMap(([k, v]) => [el("dt", {}, k), el("dd", { "data-fact": k }, v === undefined ? "–" : v)]));
  const perCpu = j.executorCores, perMem = j.executorMemoryMB + (j.memoryOverheadMB || Math.max(384, Math.floor(j.executorMemoryMB / 10)));
  $("job-placement").tBodies[0].replaceChildren(...(j.placement || []).map((p) => el("tr", {},
    el("td", {}, el("span", { class: "agentname", title: "Mesos agent id " + p.agentId }, agentName(p))), el("td", {}, p.executors),
    el("td", {}, (p.executors * perCpu) + " cpu, " + fmtMiB(p.executors * perMem)))));
  const argv = j.driverCommand || [];
  $("job-command-none").hidden = argv.length > 0;
  $("job-command").hidden = argv.length === 0;
  $("job-command").tBodies[0].replaceChildren(...(argv.length ? commandPairs(argv) : []).map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", {}, v))));
  $("job-events").replaceChildren(...(j.events || []).map((e) => el("li", {}, fmtTime(e.at) + " — " + (e.from && e.from !== e.to ? e.from + " → " : "") + e.to + (e.reason ? ": " + e.reason : "") + (e.actor ? " (by " + e.actor + ")" : ""))));
  $("job-cancel").disabled = ENDED.has(j.state);
  if (ENDED.has(j.state)) $("job-confirm").hidden = true;
  // The log is read again when the job changes (a running driver's log
  // grows: Refresh reads it now).
  const logKey = id + "/" + j.state + "/" + (j.events || []).length;
  if (logKey !== lastLogKey) { lastLogKey = logKey; loadLog(id); }
}
let lastLogKey = "";
// The driver's log, read from its Mesos sandbox (GET /api/v1/jobs/{id}/logs):
// the last 64 KiB of the chosen file, with links to the sandbox and, while
// the driver runs, to the Spark UI.
const LOG_TAIL = 65536;
let logSeq = 0;
async function loadLog(id) {
  const seq = ++logSeq;
  const file = (document.querySelector('input[name="log-file"]:checked') || {}).value || "stdout";
  const base = "/api/v1/jobs/" + encodeURIComponent(id) + "/logs?file=" + file;
  const msg = $("job-log-msg"), pre = $("job-log"), links = $("job-log-links");
  try {
    const head = await getJSON(base + "&offset=-1");
    const from = Math.max(0, head.size - LOG_TAIL);
    const c = await getJSON(base + "&offset=" + from + "&length=" + LOG_TAIL);
    if (seq !== logSeq || id !== currentJob) return;
    pre.textContent = (from > 0 ? "… (the first " + from + " bytes are not shown)\n" : "") + c.data;
    pre.hidden = false;
    pre.scrollTop = pre.scrollHeight;
    const ls = [];
    if (c.sparkUiUrl) ls.push(el("a", { href: c.sparkUiUrl, target: "_blank", rel: "noopener" }, "Spark UI"));
    if (c.sandboxUrl) ls.push(el("a", { href: c.sandboxUrl, target: "_blank", rel: "noopener" }, "sandbox on " + (c.hostname || c.agentId)));
    links.replaceChildren(...ls);
    msg.textContent = (c.size ? c.size + " bytes" : "empty") + (c.ended ? ", driver ended" : ", driver running") + " (attempt " + c.attempt + ")";
  } catch (e) {
    if (seq !== logSeq || id !== currentJob) return;
    pre.hidden = true; pre.textContent = ""; links.replaceChildren();
    msg.textContent = e.status === 404 && !e.field ? e.message : "Could not read the log: " + e.message;
  }
}
function askCancel() {
  if (!currentJob || ENDED.has(currentState)) return;
  const running = ["PLACING", "RESERVING", "LAUNCHING", "RUNNING"].includes(currentState);
  $("job-confirm-text").textContent = running
    ? "Kill job " + currentName + "? Its driver is stopped, its executors end and its reservations are released. This cannot be undone."
    : "Cancel job " + currentName + "? It leaves its queue and will not run. This cannot be undone.";
  $("job-confirm").hidden = false;
  $("job-confirm-no").focus();
}
async function cancelJob() {
  $("job-confirm").hidden = true;
  if (!currentJob) return;
  const msg = $("job-cancel-msg");
  try {
    const r = await apiFetch("/api/v1/jobs/" + encodeURIComponent(currentJob), { method: "DELETE" });
    msg.textContent = r.status === 202 ? "kill requested" : "cancelled";
  } catch (e) {
    msg.textContent = e.auth ? "Not allowed: " + e.message + " — enter a token with the cancel scope (Token button above)." : e.message;
  }
  renderJob(currentJob);
}

// ---- routing and live updates ----
function route() {
  let h = location.hash || "#/";
  // "#jobs" and "#jobs/ID" (a hand-typed or shared link) mean "#/jobs"...
  if (/^#[^/]/.test(h)) { location.replace("#/" + h.slice(1)); return; }
  const path = h.split("?")[0];
  const m = path.match(/^#\/jobs\/([^/]+)$/);
  $("view-overview").hidden = !(path === "#/" || path === "#");
  $("view-jobs").hidden = path !== "#/jobs";
  $("view-job").hidden = !m;
  if (m) renderJob(decodeURIComponent(m[1]));
  else if (path === "#/jobs") loadJobs(false);
  else refreshOverview();
  renderLeader(); // the leader badge is in the header: every page shows it
}
function refreshOverview() { renderCluster(); renderQueues(); renderCost(); }
function refreshAll() {
  renderCost();
  if (!$("view-overview").hidden) { renderCluster(); renderQueues(); }
  if (!$("view-jobs").hidden) loadJobs(false);
  if (!$("view-job").hidden && currentJob) renderJob(currentJob);
}

// ---- leadership (several instances: one leads) ----
async function renderLeader() {
  let s;
  try { s = await getJSON("/api/v1/leader"); } catch (e) { $("leader").hidden = true; return; }
  const box = $("leader");
  box.hidden = false;
  const who = s.leaderInstance || "none";
  box.title = "this page is served by " + s.instance;
  $("leader-name").textContent = s.leader ? who + " (this instance)" : who;
}

let pending = null;
function scheduleRefresh() {
  if (pending) return;
  pending = setTimeout(() => { pending = null; refreshAll(); }, 250);
}

// The event stream. EventSource cannot send a header, so the dashboard
// first trades its token (if any) for a one-use ticket and opens the
// stream with it; after an error it gets a new ticket and reconnects.
let es = null, esTimer = null, esGen = 0;
async function connect() {
  const gen = ++esGen;
  clearTimeout(esTimer);
  if (es) { es.close(); es = null; }
  const live = $("live");
  let url = "/api/v1/events";
  try {
    const t = await (await apiFetch("/api/v1/events/ticket", { method: "POST" })).json();
    url = t.url || url;
  } catch (e) {
    if (gen !== esGen) return;
    live.classList.add("off");
    if (e.auth) { live.textContent = "token needed"; return; }
    if (e.status !== 404 && e.status !== 405) { live.textContent = "reconnecting…"; esTimer = setTimeout(connect, 3000); return; }
  }
  if (gen !== esGen) return;
  const s = new EventSource(url);
  es = s;
  s.onopen = () => { live.textContent = "live"; live.classList.remove("off"); scheduleRefresh(); };
  s.onerror = () => {
    if (es !== s) return;
    live.textContent = "reconnecting…"; live.classList.add("off");
    s.close(); es = null;
    esTimer = setTimeout(connect, 2000);
  };
  for (const name of ["job", "cluster", "queues", "cost", "resync"]) s.addEventListener(name, scheduleRefresh);
  s.addEventListener("leader", renderLeader);
}

document.addEventListener("DOMContentLoaded", () => {
  const sel = $("job-state");
  for (const s of STATES) sel.append(el("option", { value: s }, s));
  sel.addEventListener("change", () => setJobsQuery({ state: sel.value }));
  $("job-search").addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => setJobsQuery({ q: $("job-search").value.trim() }), 250);
  });
  // Enter in the search box submits the form: search now, and stay on the
  // page (the policy script-src 'self' blocks an inline onsubmit).
  $("job-filter").addEventListener("submit", (ev) => {
    ev.preventDefault();
    clearTimeout(searchTimer);
    setJobsQuery({ q: $("job-search").value.trim() });
  });
  for (const th of document.querySelectorAll("#jobs-table th[data-sort]")) {
    const sortBy = () => { const k = th.dataset.sort, cur = jobsQuery().get("sort"); setJobsQuery({ sort: cur === k ? "-" + k : k }); };
    th.addEventListener("click", sortBy);
    th.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); sortBy(); } });
  }
  $("jobs-more-btn").addEventListener("click", () => loadJobs(true));
  $("job-cancel").addEventListener("click", askCancel);
  $("job-log-refresh").addEventListener("click", () => { if (currentJob) loadLog(currentJob); });
  document.querySelectorAll('input[name="log-file"]').forEach((r) => r.addEventListener("change", () => { if (currentJob) loadLog(currentJob); }));
  $("job-confirm-yes").addEventListener("click", cancelJob);
  $("job-confirm-no").addEventListener("click", () => { $("job-confirm").hidden = true; $("job-cancel").focus(); });
  $("token-btn").addEventListener("click", () => { if ($("token-form").hidden) showTokenForm(""); else hideTokenForm(); });
  $("token-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const t = $("token-input").value.trim();
    if (!t) { $("token-msg").textContent = "Paste a token first."; return; }
    setToken(t);
    $("token-input").value = "";
    $("token-msg").textContent = "Token saved for this tab.";
    hideTokenForm();
    connect(); refreshAll();
  });
  $("token-forget").addEventListener("click", () => {
    setToken("");
    $("token-input").value = "";
    $("token-msg").textContent = "Token forgotten.";
    connect(); refreshAll();
  });
  paintTokenButton();
  window.addEventListener("hashchange", route);
  route();
  connect();
});
