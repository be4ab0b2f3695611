// sparkpack dashboard. Plain JavaScript, no dependencies, works offline.
// Every user-supplied string reaches the page through textContent or an
// attribute set with setAttribute: never through innerHTML.
"use strict";

const STATES = ["SUBMITTED","QUEUED","PLACING","RESERVING","LAUNCHING","RUNNING","FINISHED","FAILED","KILLED","REJECTED","CANCELLED"];
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

async function getJSON(path) {
  const r = await fetch(path, { headers: { "Accept": "application/json" } });
  if (!r.ok) {
    let msg = r.status + " " + r.statusText;
    try { msg = (await r.json()).error || msg; } catch (_) {}
    const err = new Error(msg); err.status = r.status; throw err;
  }
  return r.json();
}

const fmtUSD = (v) => "$" + (v || 0).toFixed(v >= 100 ? 0 : 2);
const fmtTime = (t) => t ? new Date(t).toLocaleString() : "–";
const fmtDur = (s) => {
  s = Math.round(s); const neg = s < 0; s = Math.abs(s);
  const h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60), sec = s % 60;
  return (neg ? "-" : "") + (h ? h + "h" : "") + (h || m ? m + "m" : "") + sec + "s";
};
function jobColour(id) {
  let h = 0; for (const c of String(id)) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return "hsl(" + (h % 360) + " 62% 52%)";
}
const jobLabel = (j) => j.name ? j.name : String(j.id || j.jobId || "").slice(0, 8);

// ---- tooltip for executor blocks (hover and keyboard focus) ----
function attachTip(node, text) {
  const tip = $("tooltip");
  const show = () => {
    tip.textContent = text; tip.hidden = false;
    const r = node.getBoundingClientRect();
    tip.style.left = Math.min(r.right + 6, window.innerWidth - 310) + "px";
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
  catch (e) { box.replaceChildren(el("p", { class: "empty" }, e.status === 404 ? "No cluster view in this server." : "Cluster unavailable: " + e.message)); return; }
  const agents = data.agents || [];
  let active = 0;
  const cards = agents.map((a) => {
    if (a.state === "active") active++;
    const bar = (kind, total) => {
      const b = el("div", { class: "bar", "aria-label": kind + " of " + a.hostname });
      b.append(el("span", { class: "label" }, kind));
      for (const r of a.reservations || []) {
        const amount = kind === "cpus" ? r.cpus : r.memMB;
        if (!total || !amount) continue;
        const text = "job " + (r.jobName || r.jobId) + ": " + r.executors + " executor(s), " + r.cpus + " cpus, " + r.memMB + " MiB reserved on " + a.hostname;
        const blk = el("div", { class: "block", tabindex: 0, role: "img", "aria-label": text, "data-job": r.jobId,
          style: "height:" + Math.max(1, 100 * amount / total).toFixed(2) + "%;background:" + jobColour(r.jobId) });
        attachTip(blk, text);
        b.append(blk);
      }
      return b;
    };
    const st = a.state || "idle";
    // Power management's state (on, draining, powering-off, off, booting)
    // shows when it differs from what the agent's work says.
    const pw = a.power && a.power !== "on" ? a.power : "";
    const label = pw || st;
    return el("article", { class: "agent " + st + (pw ? " power-" + pw : ""), role: "listitem", "data-agent": a.id, "data-power": a.power || "", "aria-label": "agent " + a.hostname + ", " + label },
      el("header", {}, el("span", { class: "host", title: a.id }, a.hostname), el("span", { class: "badge " + (pw ? "power-" + pw : st) }, label)),
      el("div", { class: "bars" }, bar("cpus", a.cpus), bar("mem", a.memMB)),
      el("footer", {}, (a.instanceType || (a.attributes || {}).instance_type || "") + " · " + a.cpus + " cpu · " + Math.round(a.memMB / 1024) + " GiB · $" + (a.pricePerHour || 0) + "/h · " + (a.location || "")));
  });
  box.replaceChildren(...cards);
  const off = agents.filter((a) => a.power === "off").length;
  // A large cluster comes a page at a time (GET /api/v1/cluster?limit=&cursor=); the summary counts every agent.
  const sum = data.summary, shown = sum && sum.agents > agents.length ? " (first " + agents.length + " shown)" : "";
  $("cluster-summary").textContent = sum
    ? sum.agents + " agents, " + sum.byState.active + " active" + (sum.byPower ? ", " + (sum.byPower.off || 0) + " powered off" : "") + shown
    : agents.length + " agents, " + active + " active" + (agents.some((a) => a.power) ? ", " + off + " powered off" : "");
}

// ---- queues ----
function queueItem(j, deadline) {
  const li = el("li", { "data-job": j.id });
  li.append(el("a", { href: "#/jobs/" + encodeURIComponent(j.id) }, jobLabel(j)));
  li.append(" · " + j.executors + " × " + j.executorCores + " cpu");
  if (deadline) {
    li.append(" · due " + fmtTime(j.deadlineAt));
    if (j.slackSeconds !== undefined && j.slackSeconds !== null) li.append(" · slack " + fmtDur(j.slackSeconds));
    if (j.atRisk) li.append(" ", el("span", { class: "atrisk" }, "at risk"));
  }
  if (j.waitingReason) li.append(el("span", { class: "reason" }, j.waitingReason));
  return li;
}
async function renderQueues() {
  let q;
  try { q = await getJSON("/api/v1/queues"); }
  catch (e) { for (const id of ["queue-deadline", "queue-regular"]) $(id).replaceChildren(el("li", { class: "empty" }, "unavailable")); return; }
  const fill = (id, jobs, deadline) => $(id).replaceChildren(...(jobs && jobs.length ? jobs.map((j) => queueItem(j, deadline)) : [el("li", { class: "empty" }, "empty")]));
  fill("queue-deadline", q.deadline, true);
  fill("queue-regular", q.regular, false);
  // The API sends the first page (100 jobs) and the full lengths.
  const t = q.totals || { deadline: (q.deadline || []).length, regular: (q.regular || []).length, intake: 0 };
  $("total-deadline").textContent = "(" + t.deadline + ")";
  $("total-regular").textContent = "(" + t.regular + ")";
  const shown = (q.deadline || []).length + (q.regular || []).length, total = t.deadline + t.regular;
  const more = $("queue-more");
  more.hidden = shown >= total && !t.intake;
  more.textContent = "Showing the first " + shown + " of " + total + " waiting jobs" + (t.intake ? "; " + t.intake + " more being admitted" : "") + ".";
}

// ---- charts ----
function lineChart(box, series, opts) {
  const W = 600, H = opts.height || 180, P = 34;
  const svg = svgEl("svg", { viewBox: "0 0 " + W + " " + H, preserveAspectRatio: "none" });
  if (!series.length || !series[0].points.length) {
    const t = svgEl("text", { x: 10, y: 20, fill: "#5c6670" }); t.textContent = "no data yet"; svg.append(t);
    box.replaceChildren(svg); return;
  }
  let xs = [], ys = [];
  for (const s of series) for (const p of s.points) { xs.push(p[0]); ys.push(p[1]); }
  const x0 = Math.min(...xs), x1 = Math.max(...xs, x0 + 1), y1 = Math.max(...ys, opts.minMax || 1e-9);
  const X = (x) => P + (W - P - 6) * (x - x0) / (x1 - x0), Y = (y) => H - 16 - (H - 26) * y / y1;
  svg.append(svgEl("line", { x1: P, y1: H - 16, x2: W - 6, y2: H - 16, stroke: "#c5ccd3" }));
  const lab = svgEl("text", { x: 2, y: 12, fill: "#5c6670", "font-size": 11 }); lab.textContent = opts.fmt(y1); svg.append(lab);
  for (const s of series) {
    const d = s.points.map((p, i) => (i ? "L" : "M") + X(p[0]).toFixed(1) + "," + Y(p[1]).toFixed(1)).join("");
    svg.append(svgEl("path", { d, fill: "none", stroke: s.colour, "stroke-width": 2 }));
  }
  box.replaceChildren(svg);
}
async function renderCost() {
  let c;
  try { c = await getJSON("/api/v1/cost"); } catch (e) { return; }
  $("total-cost").textContent = fmtUSD(c.totalUSD);
  $("burn-rate").textContent = fmtUSD(c.burnRateUSDPerHour) + "/h";
  // The provider's bill (the emulator's, in the demo) next to the meter.
  const bill = $("bill");
  bill.hidden = !c.bill;
  if (c.bill) $("bill-total").textContent = fmtUSD(c.bill.totalUSD) + " (always on: " + fmtUSD(c.bill.alwaysOnUSD) + ")";
  const pts = (c.series || []).map((p) => [Date.parse(p.t), p.totalUSD]);
  lineChart($("chart-cost"), [{ points: pts, colour: "#0b63c4" }], { fmt: fmtUSD });
  const st = c.stats || [];
  lineChart($("chart-latency"), [{ points: st.map((p) => [Date.parse(p.t), p.placementMs]), colour: "#7a3fc4" }], { height: 90, fmt: (v) => v.toFixed(1) + " ms" });
  lineChart($("chart-queue"), [
    { points: st.map((p) => [Date.parse(p.t), p.deadlineQueue]), colour: "#b3261e" },
    { points: st.map((p) => [Date.parse(p.t), p.regularQueue]), colour: "#1e7b34" }], { height: 90, fmt: (v) => String(Math.round(v)), minMax: 1 });
}

// ---- jobs table ----
let jobsNext = "", jobsRows = [];
function deadlineCell(j) {
  if (!j.deadlineAt) return el("td", {}, "–");
  const due = Date.parse(j.deadlineAt);
  if (j.finishedAt) {
    const met = j.state === "FINISHED" && Date.parse(j.finishedAt) <= due;
    return el("td", {}, el("span", { class: met ? "met" : "missed" }, met ? "met" : "missed"));
  }
  return el("td", {}, fmtTime(j.deadlineAt), j.atRisk ? el("span", { class: "atrisk" }, " at risk") : null);
}
function jobRow(j) {
  const agents = (j.placement || []).map((p) => p.hostname || p.agentId).join(", ");
  return el("tr", { "data-job": j.id },
    el("td", {}, el("a", { href: "#/jobs/" + encodeURIComponent(j.id) }, jobLabel(j))),
    el("td", {}, el("span", { class: "state " + j.state }, j.state)),
    el("td", {}, fmtTime(j.submittedAt)), el("td", {}, fmtTime(j.startedAt)), el("td", {}, fmtTime(j.finishedAt)),
    deadlineCell(j), el("td", {}, agents || "–"));
}
function filteredRows() {
  const q = $("job-search").value.trim().toLowerCase();
  if (!q) return jobsRows;
  return jobsRows.filter((j) => [j.name, j.id, j.state, ...Object.entries(j.labels || {}).map(([k, v]) => k + "=" + v)]
    .some((s) => String(s || "").toLowerCase().includes(q)));
}
function paintJobs() { $("jobs-table").tBodies[0].replaceChildren(...filteredRows().map(jobRow)); $("jobs-more").hidden = !jobsNext; }
async function loadJobs(more) {
  const st = $("job-state").value;
  let url = "/api/v1/jobs?limit=100" + (st ? "&state=" + encodeURIComponent(st) : "");
  if (more && jobsNext) url += "&cursor=" + encodeURIComponent(jobsNext);
  try {
    const r = await getJSON(url);
    jobsRows = more ? jobsRows.concat(r.jobs) : r.jobs; jobsNext = r.next;
  } catch (e) { jobsRows = []; jobsNext = ""; }
  paintJobs();
}

// ---- one job ----
let currentJob = "";
async function renderJob(id) {
  currentJob = id;
  let j;
  try { j = await getJSON("/api/v1/jobs/" + encodeURIComponent(id)); }
  catch (e) { $("h-job").textContent = "Job not found"; $("job-facts").replaceChildren(el("dd", {}, e.message)); return; }
  $("h-job").textContent = "Job " + jobLabel(j);
  const facts = [["id", j.id], ["state", j.state], ["submitted", fmtTime(j.submittedAt)], ["started", fmtTime(j.startedAt)],
    ["finished", fmtTime(j.finishedAt)], ["deadline", j.deadlineAt ? fmtTime(j.deadlineAt) : "none"],
    ["executors", j.executors + " × (" + j.executorCores + " cpu, " + j.executorMemoryMB + " MiB)"],
    ["main class", j.app && j.app.mainClass], ["application", j.app && j.app.appResource],
    ["labels", Object.entries(j.labels || {}).map(([k, v]) => k + "=" + v).join(", ") || "none"]];
  if (j.waitingReason) facts.push(["waiting because", j.waitingReason]);
  $("job-facts").replaceChildren(...facts.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v === undefined ? "–" : v)]));
  $("job-placement").tBodies[0].replaceChildren(...(j.placement || []).map((p) => el("tr", {}, el("td", {}, p.agentId), el("td", {}, p.hostname), el("td", {}, p.executors))));
  $("job-command").textContent = j.driverCommand ? j.driverCommand.join(" \\\n    ") : "(not launched yet)";
  $("job-events").replaceChildren(...(j.events || []).map((e) => el("li", {}, fmtTime(e.at) + " — " + (e.from ? e.from + " → " : "") + e.to + (e.reason ? ": " + e.reason : ""))));
  $("job-cancel").disabled = STATES.indexOf(j.state) >= 6;
}
async function cancelJob() {
  if (!currentJob) return;
  const r = await fetch("/api/v1/jobs/" + encodeURIComponent(currentJob), { method: "DELETE" });
  let body = {}; try { body = await r.json(); } catch (_) {}
  $("job-cancel-msg").textContent = r.ok ? (r.status === 202 ? "kill requested" : "cancelled") : (body.error || r.statusText);
  renderJob(currentJob);
}

// ---- routing and live updates ----
function route() {
  const h = location.hash || "#/";
  const m = h.match(/^#\/jobs\/([^/]+)$/);
  $("view-overview").hidden = !(h === "#/" || h === "#");
  $("view-jobs").hidden = h !== "#/jobs";
  $("view-job").hidden = !m;
  if (m) renderJob(decodeURIComponent(m[1]));
  else if (h === "#/jobs") loadJobs(false);
  else refreshOverview();
}
function refreshOverview() { renderCluster(); renderQueues(); renderCost(); renderLeader(); }

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
  pending = setTimeout(() => {
    pending = null;
    renderCost();
    if (!$("view-overview").hidden) { renderCluster(); renderQueues(); }
    if (!$("view-jobs").hidden) loadJobs(false);
    if (!$("view-job").hidden && currentJob) renderJob(currentJob);
  }, 250);
}
function connect() {
  const live = $("live");
  const es = new EventSource("/api/v1/events");
  es.onopen = () => { live.textContent = "live"; live.classList.remove("off"); scheduleRefresh(); };
  es.onerror = () => { live.textContent = "reconnecting…"; live.classList.add("off"); };
  for (const name of ["job", "cluster", "queues", "cost", "resync"]) es.addEventListener(name, scheduleRefresh);
  es.addEventListener("leader", renderLeader);
}

document.addEventListener("DOMContentLoaded", () => {
  const sel = $("job-state");
  for (const s of STATES) sel.append(el("option", { value: s }, s));
  sel.addEventListener("change", () => loadJobs(false));
  $("job-search").addEventListener("input", paintJobs);
  $("jobs-more-btn").addEventListener("click", () => loadJobs(true));
  $("job-cancel").addEventListener("click", cancelJob);
  window.addEventListener("hashchange", route);
  route();
  connect();
});
