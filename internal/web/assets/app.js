// The status page: reads /api/v1 and /ui/ of the server that served it,
// nothing else, and renders with DOM calls only (no innerHTML with data).
// Live updates come from /ui/events (Server-Sent Events, read with fetch
// so that a token can go in a header).
"use strict";

const state = {
  token: sessionStorage.getItem("pbs-web-token") || "",
  who: null,
  jobs: [],          // rows: {id, name, owner, queue, state, ncpus, walltime, nodes, attrs}
  sortKey: "id",
  sortDir: 1,
  lastEvent: "",
  history: 0,        // events up to this sequence number are history: listed, not applied
  events: [],
  refreshTimer: 0,
  detailId: "",
};

// recentEvents is how many of the server's last changes the page lists
// when it opens.
const recentEvents = 50;

function $(id) { return document.getElementById(id); }

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

function svg(tag, attrs, text) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function headers() {
  return state.token ? { Authorization: "Bearer " + state.token } : {};
}

class APIError extends Error {
  constructor(status, text) { super(text); this.status = status; }
}

async function api(path) {
  const resp = await fetch(path, { headers: headers(), cache: "no-store" });
  const body = await resp.json().catch(() => ({}));
  if (!resp.ok) throw new APIError(resp.status, body.error || resp.statusText);
  return body;
}

function notice(text) {
  const n = $("notice");
  n.hidden = !text;
  n.textContent = text || "";
}

// ---- loading -------------------------------------------------------------

async function loadAll() {
  try {
    state.who = await api("/ui/whoami");
  } catch (e) {
    state.who = null;
    showViewer();
    notice(e.message);
    if (e.status === 401 || e.status === 403) $("token-form").hidden = false;
    return false;
  }
  showViewer();
  if (!state.who.see) {
    notice(state.who.anonymous
      ? "This server shows nothing to anonymous visitors (query_other_jobs is false). Use a token (pbs_webtoken) or sign in through the site's proxy."
      : "User " + state.who.user + " may not use this server.");
    $("token-form").hidden = false;
    return false;
  }
  notice("");
  await Promise.all([loadServer(), loadQueues(), loadNodes(), loadJobs(), loadPlan(), loadFairshare()]
    .map(p => p.catch(e => notice(e.message))));
  return true;
}

function showViewer() {
  const w = state.who;
  let text = "not signed in";
  if (w) {
    text = w.anonymous ? "anonymous" : w.user + (w.manager ? " (manager)" : "");
    $("server-name").textContent = w.server;
    document.title = w.server + " — PBS status";
  }
  $("viewer").textContent = text;
}

function scheduleRefresh() {
  if (state.refreshTimer) return;
  state.refreshTimer = setTimeout(async () => {
    state.refreshTimer = 0;
    await Promise.all([loadServer(), loadQueues(), loadNodes(), loadJobs(), loadPlan()]
      .map(p => p.catch(e => notice(e.message))));
  }, 250);
}

// ---- server and queues -----------------------------------------------------

async function loadServer() {
  const doc = await api("/api/v1/server");
  const [name, s] = Object.entries(doc.Server || {})[0] || ["", {}];
  $("server-summary").textContent = [name, s.server_state, s.state_count].filter(Boolean).join(" · ");
}

function counts(sc) {
  const m = {};
  for (const part of String(sc || "").trim().split(/\s+/)) {
    const [k, v] = part.split(":");
    if (k) m[k] = Number(v) || 0;
  }
  return m;
}

async function loadQueues() {
  const doc = await api("/api/v1/queues");
  const body = $("queues").tBodies[0];
  body.replaceChildren();
  for (const [name, q] of Object.entries(doc.Queue || {})) {
    const c = counts(q.state_count);
    body.append(el("tr", { "data-queue": name },
      el("td", {}, name), el("td", {}, q.queue_type || ""), el("td", {}, q.enabled || ""), el("td", {}, q.started || ""),
      el("td", {}, q.total_jobs ?? 0), el("td", {}, c.Queued ?? 0), el("td", {}, c.Held ?? 0),
      el("td", {}, c.Running ?? 0), el("td", {}, c.Exiting ?? 0)));
  }
}

// ---- nodes -----------------------------------------------------------------

function nodeClass(st) {
  st = String(st || "");
  if (/down|unknown/.test(st)) return "down";
  if (/offline/.test(st)) return "offline";
  if (/busy|exclusive/.test(st)) return "busy";
  if (/free/.test(st)) return "free";
  return "";
}

async function loadNodes() {
  const doc = await api("/api/v1/nodes");
  const grid = $("nodes");
  grid.replaceChildren();
  for (const [name, n] of Object.entries(doc.nodes || {})) {
    const avail = Number((n.resources_available || {}).ncpus) || 0;
    const used = Number((n.resources_assigned || {}).ncpus) || 0;
    const jobs = n.jobs || [];
    const busy = jobs.length ? " busy" : "";
    const card = el("div", { class: "node " + (nodeClass(n.state) || busy.trim()), "data-name": name },
      el("div", { class: "name" }, name),
      el("div", { class: "state" }, n.state || "?"),
      el("div", { class: "load" }, "load " + (n.loadave ?? "–") + " · cpus " + used + "/" + avail),
      el("meter", { min: 0, max: Math.max(avail, 1), value: used }),
      el("div", { class: "jobs" }, jobs.join(" ")));
    grid.append(card);
  }
  if (!grid.children.length) grid.append(el("p", { class: "muted" }, "No nodes."));
}

// ---- jobs --------------------------------------------------------------------

function jobRow(id, j) {
  const rl = j.Resource_List || {};
  return {
    id, name: String(j.Job_Name ?? ""), owner: String(j.Job_Owner ?? "").split("@")[0], queue: String(j.queue ?? ""),
    state: String(j.job_state ?? ""), ncpus: Number(rl.ncpus) || 0, walltime: String(rl.walltime ?? ""),
    nodes: String(j.exec_host ?? "").split("+").map(h => h.split("/")[0]).filter(Boolean).join(" "),
  };
}

async function loadJobs() {
  const history = $("job-history").checked ? "?history=true" : "";
  const doc = await api("/api/v1/jobs" + history);
  state.jobs = Object.entries(doc.Jobs || {}).map(([id, j]) => jobRow(id, j));
  renderJobs();
}

function idKey(id) {
  const m = /^(\d+)(\[(\d*)\])?/.exec(id);
  return m ? Number(m[1]) * 1e6 + (m[3] ? Number(m[3]) : 0) : 0;
}

function renderJobs() {
  const text = $("job-filter").value.trim().toLowerCase();
  const st = $("job-state").value;
  const rows = state.jobs.filter(r => (!st || r.state === st) &&
    (!text || [r.id, r.name, r.owner, r.queue].some(v => v.toLowerCase().includes(text))));
  const k = state.sortKey, d = state.sortDir;
  rows.sort((a, b) => {
    const x = k === "id" ? idKey(a.id) : a[k], y = k === "id" ? idKey(b.id) : b[k];
    return (x < y ? -1 : x > y ? 1 : 0) * d;
  });
  const body = $("jobs").tBodies[0];
  body.replaceChildren(...rows.map(r => el("tr", { "data-id": r.id, "data-state": r.state },
    el("td", { class: "id" }, r.id), el("td", {}, r.name), el("td", {}, r.owner), el("td", {}, r.queue),
    el("td", { class: "state " + r.state }, r.state), el("td", {}, r.ncpus || ""), el("td", {}, r.walltime), el("td", {}, r.nodes))));
  $("job-count").textContent = rows.length + " of " + state.jobs.length;
  for (const th of $("jobs").tHead.rows[0].cells) {
    th.classList.toggle("sorted-asc", th.dataset.key === k && d > 0);
    th.classList.toggle("sorted-desc", th.dataset.key === k && d < 0);
  }
}

// flatten turns a job document's nested objects into name.member rows.
function flatten(obj, prefix, out) {
  for (const [k, v] of Object.entries(obj)) {
    const name = prefix ? prefix + "." + k : k;
    if (v && typeof v === "object" && !Array.isArray(v)) flatten(v, name, out);
    else out.push([name, Array.isArray(v) ? v.join(", ") : String(v)]);
  }
  return out;
}

async function showJob(id) {
  state.detailId = id;
  const box = $("job-detail");
  try {
    const doc = await api("/api/v1/jobs/" + encodeURIComponent(id));
    const j = (doc.Jobs || {})[id] || Object.values(doc.Jobs || {})[0] || {};
    $("job-detail-title").textContent = id;
    $("job-detail-table").tBodies[0].replaceChildren(...flatten(j, "", []).map(([k, v]) =>
      el("tr", {}, el("td", {}, k), el("td", {}, v))));
    box.hidden = false;
  } catch (e) {
    notice(e.message);
  }
}

// ---- the plan ----------------------------------------------------------------

function clock(t) {
  const d = new Date(t * 1000);
  return d.toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

async function loadPlan() {
  const p = await api("/ui/plan");
  const box = $("plan");
  box.replaceChildren();
  const notes = $("plan-notes");
  notes.replaceChildren(...(p.notes || []).map(n => el("li", {}, n)));
  if (p.waiting) notes.append(el("li", {}, p.waiting + " queued or held job(s) without an estimated start (the scheduler reserves for the top jobs only)."));
  const bars = p.bars || [];
  if (!bars.length && !(p.dedicated || []).length) {
    box.append(el("p", { class: "muted" }, "Nothing running and no reservation."));
    return;
  }
  let t0 = p.now, t1 = p.now + 3600;
  for (const b of bars) { t0 = Math.min(t0, b.start); if (b.end) t1 = Math.max(t1, b.end); }
  for (const w of p.dedicated || []) t1 = Math.max(t1, Math.min(w.to, p.now + 7 * 86400));
  t1 = Math.min(t1, p.now + 14 * 86400);
  const W = 1000, left = 170, row = 18, top = 22;
  const H = top + Math.max(bars.length, 1) * row + 8;
  const x = t => left + (Math.min(Math.max(t, t0), t1) - t0) / Math.max(t1 - t0, 1) * (W - left - 10);
  const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "timeline" });
  for (const w of p.dedicated || []) {
    if (w.to <= t0 || w.from >= t1) continue;
    s.append(svg("rect", { class: "ded", x: x(w.from), y: top - 4, width: Math.max(x(w.to) - x(w.from), 1), height: H - top }));
  }
  const axis = svg("g", { class: "axis" });
  for (let i = 0; i <= 4; i++) {
    const t = t0 + (t1 - t0) * i / 4;
    const label = i < 4 ? { x: x(t) + 2, y: 12 } : { x: x(t) - 2, y: 12, "text-anchor": "end" };
    axis.append(svg("line", { x1: x(t), x2: x(t), y1: top - 6, y2: H }), svg("text", label, clock(t)));
  }
  s.append(axis);
  bars.forEach((b, i) => {
    const y = top + i * row;
    const end = b.end || t1;
    const g = svg("g", { "data-id": b.id, "data-kind": b.kind });
    g.append(svg("title", {}, `${b.id} ${b.name} (${b.owner}) ${b.kind === "running" ? "running since" : "estimated start"} ${clock(b.start)}` +
      (b.end ? `, walltime ends ${clock(b.end)}` : ", no walltime") + (b.nodes ? ` on ${b.nodes}` : "")));
    g.append(svg("text", { x: 4, y: y + 12 }, `${b.id} ${b.owner}`));
    g.append(svg("rect", { class: "bar-" + b.kind + (b.end ? "" : " bar-open"), x: x(b.start), y: y + 2, width: Math.max(x(end) - x(b.start), 2), height: row - 5, rx: 2 }));
    s.append(g);
  });
  s.append(svg("line", { class: "now", x1: x(p.now), x2: x(p.now), y1: top - 6, y2: H }));
  box.append(s);
}

// ---- fair share ----------------------------------------------------------------

async function loadFairshare() {
  const f = await api("/ui/fairshare");
  const box = $("fairshare");
  box.replaceChildren();
  if (!f.available) {
    box.append(el("p", { class: "muted" }, "Not shown: " + f.why));
    return;
  }
  box.append(el("p", { class: "muted" }, (f.enabled ? "fair_share is on. " : "fair_share is off in sched_config. ") +
    "Usage as of the scheduler's last write of its usage file" + (f.usage_time ? " (" + clock(f.usage_time) + ")" : "") + "."));
  box.append(el("div", { class: "fs-row head" }, el("span", {}, "Entity"), el("span", {}, "Shares"), el("span", {}, "Of parent"),
    el("span", {}, "Of machine"), el("span", {}, "Usage (cpu s)"), el("span", {}, "Factor")));
  for (const e of f.entities) {
    const name = el("span", {}, e.name);
    name.style.paddingLeft = (e.depth * 1.2) + "em";
    box.append(el("div", { class: "fs-row", "data-entity": e.name }, name, el("span", {}, e.shares),
      el("span", {}, (100 * e.of_parent).toFixed(1) + "%"), el("span", {}, (100 * e.of_machine).toFixed(1) + "%"),
      el("span", {}, Math.round(e.usage)), el("span", {}, e.factor.toFixed(3))));
  }
}

// ---- live updates ------------------------------------------------------------------

function addEvent(ev) {
  const t = new Date(ev.time || Date.now()).toLocaleTimeString();
  let text = `${t} ${ev.job} ${ev.state}`;
  if (ev.exit_status !== undefined && ev.exit_status !== null) text += ` exit ${ev.exit_status}`;
  if (ev.comment) text += ` — ${ev.comment}`;
  const list = $("events");
  list.prepend(el("li", { "data-job": ev.job }, text));
  while (list.children.length > 100) list.lastChild.remove();
}

// applyEvent shows a job's new state at once; the listings follow.
// Events from before the page loaded only fill the list.
function applyEvent(ev) {
  addEvent(ev);
  if (ev.seq <= state.history) return;
  const row = state.jobs.find(r => r.id === ev.job);
  if (row) {
    row.state = ev.state;
    renderJobs();
  }
  if (state.detailId === ev.job) showJob(ev.job);
  scheduleRefresh();
}

function setLive(on, why) {
  const l = $("live");
  l.className = "live " + (on ? "on" : "off");
  l.textContent = on ? "live" : "not live";
  l.title = why || "";
}

async function follow() {
  for (;;) {
    if (!state.who || !state.who.see || !state.who.live) {
      setLive(false, state.who && !state.who.live ? "the server has no event stream; refreshing every 10 s" : "");
      await new Promise(r => setTimeout(r, 10000));
      await loadAll();
      continue;
    }
    try {
      const h = headers();
      if (!state.lastEvent && state.who.last_event) {
        // First connection: the last changes before the page loaded
        // fill the list of recent events.
        state.history = state.who.last_event;
        state.lastEvent = String(Math.max(state.who.last_event - recentEvents, 0));
      }
      if (state.lastEvent) h["Last-Event-ID"] = state.lastEvent;
      const resp = await fetch("/ui/events", { headers: h, cache: "no-store" });
      if (!resp.ok) throw new Error("events: " + resp.status);
      setLive(true);
      const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          handleFrame(buf.slice(0, i));
          buf = buf.slice(i + 2);
        }
      }
    } catch (e) {
      // fall through: reconnect
    }
    setLive(false, "reconnecting");
    await new Promise(r => setTimeout(r, 1000));
  }
}

function handleFrame(frame) {
  let id = "", type = "message", data = "";
  for (const line of frame.split("\n")) {
    if (line.startsWith(":")) continue;
    const [k, ...rest] = line.split(":");
    const v = rest.join(":").replace(/^ /, "");
    if (k === "id") id = v;
    else if (k === "event") type = v;
    else if (k === "data") data += v;
  }
  if (id) state.lastEvent = id;
  if (type === "job") {
    try { applyEvent(JSON.parse(data)); } catch (e) { /* a bad frame is skipped */ }
  } else if (type === "reset") {
    // Events were missed (a gap): take everything afresh.
    state.lastEvent = "";
    loadAll();
  }
}

// ---- wiring ----------------------------------------------------------------------

function wire() {
  $("job-filter").addEventListener("input", renderJobs);
  $("job-state").addEventListener("change", renderJobs);
  $("job-history").addEventListener("change", () => loadJobs().catch(e => notice(e.message)));
  for (const th of $("jobs").tHead.rows[0].cells) {
    th.addEventListener("click", () => {
      const k = th.dataset.key;
      state.sortDir = state.sortKey === k ? -state.sortDir : 1;
      state.sortKey = k;
      renderJobs();
    });
  }
  $("jobs").tBodies[0].addEventListener("click", ev => {
    const tr = ev.target.closest("tr");
    if (tr && tr.dataset.id) showJob(tr.dataset.id);
  });
  $("job-detail-close").addEventListener("click", () => { $("job-detail").hidden = true; state.detailId = ""; });
  $("token-button").addEventListener("click", () => { $("token-form").hidden = !$("token-form").hidden; });
  $("token-form").addEventListener("submit", ev => {
    ev.preventDefault();
    state.token = $("token-input").value.trim();
    sessionStorage.setItem("pbs-web-token", state.token);
    $("token-input").value = "";
    $("token-form").hidden = true;
    location.reload();
  });
  $("token-clear").addEventListener("click", () => {
    sessionStorage.removeItem("pbs-web-token");
    location.reload();
  });
}

wire();
loadAll().then(() => follow());
