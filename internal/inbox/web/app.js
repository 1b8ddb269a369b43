// toolwarden inbox page. Everything shown comes from the local server's
// JSON; text from tools (arguments, reasons, names) is only ever set as
// textContent, never parsed as HTML.
"use strict";

(function () {
  const $ = (sel) => document.querySelector(sel);

  // el builds an element: attrs are attributes (data-*, class, ...),
  // children are nodes or strings (added as text).
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children) {
      if (c === undefined || c === null) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  // A one-time answer link (/a/<id>?k=<key>) shows that one ask only.
  const linkMatch = location.pathname.match(/^\/a\/([0-9a-f]{32})$/);
  const link = linkMatch ? { id: linkMatch[1], key: new URLSearchParams(location.search).get("k") || "" } : null;

  let skew = 0; // server clock minus ours, in ms
  const shown = new Map(); // ask id -> {ask, node}

  async function api(path, opts) {
    const o = Object.assign({ credentials: "same-origin", headers: {} }, opts || {});
    if (o.body !== undefined) {
      o.method = o.method || "POST";
      o.headers["Content-Type"] = "application/json";
      o.body = JSON.stringify(o.body);
    }
    const r = await fetch(path, o);
    let data = null;
    try { data = await r.json(); } catch (e) { data = null; }
    if (!r.ok) throw new Error((data && data.error) || (r.status + " " + r.statusText));
    return data;
  }

  function setStatus(state, text) {
    const s = $("#status");
    s.dataset.state = state;
    s.textContent = text;
  }

  // ---- pending asks ----

  function fmtTime(t) {
    const d = new Date(t);
    return isNaN(d) ? "" : d.toLocaleString();
  }

  function fmtLeft(ms) {
    if (ms <= 0) return "expired";
    const s = Math.floor(ms / 1000);
    if (s < 60) return s + " s";
    const m = Math.floor(s / 60);
    if (m < 60) return m + " min " + (s % 60) + " s";
    return Math.floor(m / 60) + " h " + (m % 60) + " min";
  }

  function field(name, value, cls) {
    return [el("dt", {}, name), el("dd", { "data-field": cls || name.toLowerCase(), class: cls }, value)];
  }

  function askNode(a) {
    const hints = el("div", { class: "hints", "data-field": "hints" });
    const values = (a.hints && a.hints.values) || {};
    for (const k of Object.keys(values).sort()) hints.append(el("span", { class: "chip" }, k + ": " + values[k]));
    if (a.hints && a.hints.trust) hints.append(el("span", { class: "chip" }, "trust: " + a.hints.trust));
    if (a.hints && a.hints.drifted) hints.append(el("span", { class: "chip warn" }, "definition changed since it was pinned: its hints are not believed"));
    if (!hints.childElementCount) hints.append(el("span", { class: "chip" }, "no hints declared (spec defaults: may change things, open world)"));

    const reasons = el("ul", { class: "reasons", "data-field": "reasons" });
    for (const r of a.reasons || []) reasons.append(el("li", {}, r));

    const answers = el("div", { class: "answers" });
    for (const o of a.options || []) {
      answers.append(el("button", { type: "button", "data-ask-id": a.id, "data-option": o.id, title: o.id }, o.title || o.id));
    }

    const dl = el("dl", {},
      ...field("App", a.app || a.server),
      ...field("From", a.origin + " (pid " + a.pid + ")", "origin"),
      ...field("Session", a.session || "—"),
      ...field("Asked", fmtTime(a.created), "created"),
      ...field("Time left", "", "left"),
      ...(a.digest ? field("Digest", "sha256:" + a.digest, "digest") : []),
    );
    const node = el("article", { class: "ask", "data-ask-id": a.id, "data-state": "pending" },
      el("h3", {}, el("span", { "data-field": "tool" }, a.tool), " ",
        el("span", { class: "server" }, "on ", el("span", { "data-field": "server" }, a.server))),
      a.title ? el("p", { class: "title" }, a.title) : null,
      el("h4", {}, "Why"), reasons,
      el("h4", {}, "Hints"), hints, dl,
      el("h4", {}, "Arguments, as the prompt shows them"),
      el("pre", { class: "arguments", "data-field": "arguments" }, a.arguments || "(no arguments)"),
      a.scope ? el("p", { class: "scope", "data-field": "scope" }, "Argument-scoped approval remembers: " + a.scope) : null,
      answers,
      el("p", { class: "message", "data-field": "message", role: "status" }));
    return node;
  }

  function renderAsks(list) {
    const box = $("#asks");
    const ids = new Set(list.map((a) => a.id));
    for (const [id, s] of shown) {
      if (!ids.has(id)) { s.node.remove(); shown.delete(id); }
    }
    for (const a of list) {
      if (shown.has(a.id)) continue;
      const node = askNode(a);
      shown.set(a.id, { ask: a, node });
      box.append(node); // the list is oldest first; new asks go last
    }
    $("#no-asks").hidden = shown.size > 0;
    $("#ask-count").textContent = shown.size ? "(" + shown.size + ")" : "";
    document.title = (shown.size ? "(" + shown.size + ") " : "") + "toolwarden inbox";
    tick();
  }

  function tick() {
    const now = Date.now() + skew;
    for (const { ask, node } of shown.values()) {
      const left = new Date(ask.expires).getTime() - now;
      const span = node.querySelector("[data-field=left]");
      span.textContent = fmtLeft(left);
      span.classList.toggle("soon", left < 30000);
      if (left <= 0 && node.dataset.state === "pending") {
        node.dataset.state = "expired";
        node.querySelectorAll("button").forEach((b) => (b.disabled = true));
      }
    }
  }

  async function answer(btn) {
    const id = btn.dataset.askId, option = btn.dataset.option;
    const s = shown.get(id);
    if (!s) return;
    const node = s.node, msg = node.querySelector("[data-field=message]");
    node.dataset.state = "sending";
    node.querySelectorAll("button").forEach((b) => (b.disabled = true));
    try {
      if (link) await api("/api/link/" + id, { body: { k: link.key, option } });
      else await api("/api/asks/" + id, { body: { option } });
      node.dataset.state = "answered";
      msg.textContent = "Answered: " + btn.textContent + ". The asking call goes on.";
    } catch (e) {
      node.dataset.state = "refused";
      msg.textContent = "Not answered: " + e.message;
      msg.classList.add("error");
    }
  }

  // ---- standing approvals ----

  async function loadApprovals() {
    let data;
    try { data = await api("/api/approvals"); } catch (e) { return; }
    $("#approvals-file").textContent = data.file ? "From " + data.file + ". Revoking one asks about the tool again on its next call, in every running toolwarden." : "No approvals file.";
    const err = $("#approvals-error");
    err.hidden = !data.error;
    err.textContent = data.error || "";
    const body = $("#approvals tbody");
    body.replaceChildren();
    for (const g of data.grants) {
      const app = g.app + (g.connector ? " (connector " + g.connector + ")" : "");
      body.append(el("tr", { "data-hash": g.definition_hash, "data-server": g.server, "data-tool": g.tool, "data-app": g.app },
        el("td", {}, g.server), el("td", {}, g.tool), el("td", {}, app),
        el("td", { class: "hash", title: g.definition_hash }, g.definition_hash.slice(0, 12)),
        el("td", {}, fmtTime(g.granted_at)),
        el("td", {}, el("button", { type: "button", "data-revoke": g.definition_hash }, "Revoke"))));
    }
    body.querySelectorAll("button[data-revoke]").forEach((b, i) => {
      const g = data.grants[i];
      b.addEventListener("click", () => revoke(b, g));
    });
    $("#no-approvals").hidden = data.grants.length > 0;
    $("#approvals").hidden = data.grants.length === 0;
  }

  async function revoke(btn, g) {
    btn.disabled = true;
    try {
      await api("/api/approvals/revoke", { body: { app: g.app, server: g.server, connector: g.connector || "", tool: g.tool, definition_hash: g.definition_hash } });
    } catch (e) {
      btn.disabled = false;
      btn.title = e.message;
      $("#approvals-error").hidden = false;
      $("#approvals-error").textContent = "Not revoked: " + e.message;
    }
    loadApprovals();
  }

  // ---- recent decisions ----

  let decisions = [];
  const TABLE_ROWS = 50; // the table shows the newest; the chart shows them all

  async function loadDecisions() {
    let data;
    try { data = await api("/api/decisions"); } catch (e) { return; }
    decisions = data.decisions || [];
    let note = data.file ? "One row per call, with how it ended, from the tail of " + data.file + "." : "No audit log: it is turned off ([audit] enabled = false in the config, or --audit off).";
    if (decisions.length > TABLE_ROWS) note += " The table shows the newest " + TABLE_ROWS + " of " + decisions.length + "; the chart all of them.";
    if (data.truncated) note += " Older records are left out.";
    if (data.skipped) note += " " + data.skipped + " line(s) could not be read (torn, or not a decision record) and were skipped; the file is left as it is.";
    if (data.error) note += " " + data.error;
    $("#decisions-file").textContent = note;
    const body = $("#decisions tbody");
    body.replaceChildren();
    for (const d of decisions.slice(-TABLE_ROWS).reverse()) {
      const kind = d.decision;
      body.append(el("tr", { "data-decision": kind, "data-outcome": d.outcome || "" },
        el("td", {}, fmtTime(d.time)), el("td", {}, d.server), el("td", {}, d.tool),
        el("td", { class: "d-" + kind, title: d.verdict ? "policy: " + d.verdict + (d.by ? "; answered in: " + d.by : "") : "" }, d.label || d.decision),
        el("td", {}, d.reason || ""), el("td", {}, d.session || "")));
    }
    $("#no-decisions").hidden = decisions.length > 0;
    drawChart();
  }

  function drawChart() {
    const box = $("#chart");
    box.replaceChildren();
    if (!decisions.length) { box.hidden = true; return; }
    box.hidden = false;
    box.append(window.toolwardenChart.render(decisions, $("#chart-group").value));
  }

  // ---- wiring ----

  document.addEventListener("click", (ev) => {
    const b = ev.target.closest("button[data-ask-id][data-option]");
    if (b && !b.disabled) answer(b);
  });
  $("#chart-group").addEventListener("change", drawChart);
  setInterval(tick, 1000);

  async function start() {
    if (link) {
      document.body.classList.add("link-mode");
      try {
        const a = await api("/api/link/" + link.id + "?k=" + encodeURIComponent(link.key));
        setStatus("live", "answer link");
        renderAsks([a]);
      } catch (e) {
        setStatus("reconnecting", "link unusable");
        $("#no-asks").textContent = "This answer link cannot be used: " + e.message;
      }
      return;
    }
    try {
      const info = await api("/api/info");
      const notes = $("#notes");
      for (const n of info.notes) notes.append(el("li", {}, n));
      notes.append(el("li", {}, "Rendezvous directory: " + info.dir));
    } catch (e) { /* the stream below says it */ }
    const es = new EventSource("/api/events");
    es.addEventListener("open", () => setStatus("live", "live"));
    es.addEventListener("error", () => setStatus("reconnecting", "reconnecting…"));
    es.addEventListener("asks", (ev) => {
      const data = JSON.parse(ev.data);
      skew = new Date(data.now).getTime() - Date.now();
      const sk = $("#skipped");
      const notes = [];
      if (data.more) notes.push(data.more + " more pending ask(s) not shown here: the oldest " + data.asks.length + " are; answer them to see the rest.");
      const skippedAll = data.skipped.length + (data.skipped_more || 0);
      if (skippedAll) notes.push("Skipped " + skippedAll + " unreadable ask file(s): " + data.skipped.map((s) => s.file + " (" + s.why + ")").join("; ") + (data.skipped_more ? "; and " + data.skipped_more + " more" : ""));
      sk.hidden = !notes.length;
      sk.textContent = notes.join(" ");
      renderAsks(data.asks);
      setStatus("live", "live");
    });
    es.addEventListener("approvals", loadApprovals);
    es.addEventListener("decisions", loadDecisions);
  }
  start();
})();
