// toolwarden team inbox page. Everything shown comes from this gateway's
// JSON; text from tools (arguments, reasons, names) is only ever set as
// textContent, never parsed as HTML. The bearer token lives in this tab's
// sessionStorage and goes out only in the Authorization header of this
// page's own requests: no cookie is ever set.
"use strict";

(function () {
  const $ = (sel) => document.querySelector(sel);
  const TOKEN_KEY = "toolwarden-team-inbox-token";
  const POLL_MS = 2000;

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

  let skew = 0; // server clock minus ours, in ms
  let timer = null;
  const shown = new Map(); // ask id -> {ask, node}

  class AuthError extends Error {}

  async function api(path, body) {
    const headers = {};
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers["Authorization"] = "Bearer " + token;
    const o = { headers, credentials: "omit", cache: "no-store" };
    if (body !== undefined) {
      o.method = "POST";
      headers["Content-Type"] = "application/json";
      o.body = JSON.stringify(body);
    }
    const r = await fetch(path, o);
    let data = null;
    try { data = await r.json(); } catch (e) { data = null; }
    if (r.status === 401) throw new AuthError((data && data.error_description) || "the token was refused");
    if (!r.ok) throw new Error((data && data.error) || (r.status + " " + r.statusText));
    return data;
  }

  function setStatus(state, text) {
    const s = $("#status");
    s.dataset.state = state;
    s.textContent = text;
  }

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

  function field(name, value, key) {
    return [el("dt", {}, name), el("dd", { "data-field": key || name.toLowerCase() }, value)];
  }

  function answersNode(a) {
    const box = el("div", { class: "answers" });
    if (!a.may_answer) {
      box.append(el("span", { class: "note" }, "Waiting for " + (a.approvers || a.asker) + " to answer."));
      return box;
    }
    for (const o of a.options || []) {
      box.append(el("button", { type: "button", "data-ask-id": a.id, "data-option": o.id, title: o.id }, o.title || o.id));
    }
    if ((a.options || []).some((o) => o.id === "always")) {
      const sel = el("select", { "data-scope-for": a.id, "aria-label": "Always covers" },
        el("option", { value: "principal" }, "always: for " + a.asker + " only"));
      if (a.approvers) {
        sel.append(el("option", { value: "team" }, "always: for the whole team"),
          el("option", { value: "group" }, "always: for a group…"));
      }
      const group = el("input", { "data-group-for": a.id, placeholder: "group name", hidden: true, "aria-label": "Group" });
      sel.addEventListener("change", () => { group.hidden = sel.value !== "group"; });
      box.append(sel, group);
    }
    return box;
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
    const dl = el("dl", {},
      ...field("Asked by", a.asker, "asker"),
      ...field("Approvers", a.approvers || "the asker only", "approvers"),
      ...field("App", a.app || a.server),
      ...field("Asked", fmtTime(a.created), "created"),
      ...field("Time left", "", "left"),
      ...(a.digest ? field("Digest", "sha256:" + a.digest, "digest") : []));
    return el("article", { class: "ask", "data-ask-id": a.id, "data-state": a.may_answer ? "pending" : "waiting" },
      el("h3", {}, el("span", { "data-field": "tool" }, a.tool), " ",
        el("span", { class: "server" }, "on ", el("span", { "data-field": "server" }, a.server))),
      a.title ? el("p", { class: "title" }, a.title) : null,
      el("h4", {}, "Why"), reasons,
      el("h4", {}, "Hints"), hints, dl,
      el("h4", {}, "Arguments, as the prompt shows them"),
      el("pre", { class: "arguments", "data-field": "arguments" }, a.arguments || "(no arguments)"),
      a.scope ? el("p", { class: "scope", "data-field": "scope" }, "Argument-scoped approval remembers: " + a.scope) : null,
      answersNode(a),
      el("p", { class: "message", "data-field": "message", role: "status" }));
  }

  function render(data) {
    const box = $("#asks");
    const ids = new Set(data.asks.map((a) => a.id));
    for (const [id, s] of shown) {
      // An answered ask stays, with its message, until the next answer.
      if (!ids.has(id) && s.node.dataset.state !== "answered" && s.node.dataset.state !== "refused") { s.node.remove(); shown.delete(id); }
    }
    for (const a of data.asks) {
      if (shown.has(a.id)) continue;
      const node = askNode(a);
      shown.set(a.id, { ask: a, node });
      box.append(node);
    }
    const open = [...shown.values()].filter((s) => s.node.dataset.state === "pending" || s.node.dataset.state === "waiting").length;
    $("#no-asks").hidden = shown.size > 0;
    $("#ask-count").textContent = open ? "(" + open + ")" : "";
    document.title = (open ? "(" + open + ") " : "") + "toolwarden team inbox";
    $("#more").hidden = !data.more;
    $("#more").textContent = data.more ? data.more + " more open ask(s) in the store are not listed: the oldest are; answer them to see the rest." : "";
    tick();
  }

  function tick() {
    const now = Date.now() + skew;
    for (const { ask, node } of shown.values()) {
      const left = new Date(ask.expires).getTime() - now;
      const span = node.querySelector("[data-field=left]");
      span.textContent = fmtLeft(left);
      span.classList.toggle("soon", left < 30000);
      if (left <= 0 && (node.dataset.state === "pending" || node.dataset.state === "waiting")) {
        node.dataset.state = "expired";
        node.querySelectorAll("button, select, input").forEach((b) => (b.disabled = true));
      }
    }
  }

  async function answer(btn) {
    const id = btn.dataset.askId, option = btn.dataset.option;
    const s = shown.get(id);
    if (!s) return;
    const node = s.node, msg = node.querySelector("[data-field=message]");
    const body = { option };
    if (option === "always") {
      const sel = node.querySelector("select[data-scope-for]");
      body.scope = sel ? sel.value : "principal";
      if (body.scope === "group") body.scope = "group:" + node.querySelector("input[data-group-for]").value;
    }
    node.dataset.state = "sending";
    node.querySelectorAll("button, select, input").forEach((b) => (b.disabled = true));
    try {
      await api("/inbox/api/asks/" + encodeURIComponent(id), body);
      node.dataset.state = "answered";
      msg.textContent = "Answered: " + btn.textContent + ". The asking call goes on.";
    } catch (e) {
      if (e instanceof AuthError) return signedOut(e.message);
      node.dataset.state = "refused";
      msg.textContent = "Not answered: " + e.message;
      msg.classList.add("error");
    }
  }

  async function refresh() {
    try {
      const data = await api("/inbox/api/asks");
      skew = new Date(data.now).getTime() - Date.now();
      const v = data.viewer;
      $("#viewer").textContent = "signed in as " + v.principal + (v.groups.length ? " (" + v.groups.join(", ") + ")" : "");
      $("#token-form").hidden = true;
      $("#asks-section").hidden = false;
      $("#sign-out").hidden = !sessionStorage.getItem(TOKEN_KEY);
      setStatus("live", "live");
      render(data);
    } catch (e) {
      if (e instanceof AuthError) return signedOut(sessionStorage.getItem(TOKEN_KEY) ? e.message : "");
      setStatus("error", "cannot load: " + e.message);
    }
    timer = setTimeout(refresh, POLL_MS);
  }

  function signedOut(why) {
    clearTimeout(timer);
    sessionStorage.removeItem(TOKEN_KEY);
    for (const s of shown.values()) s.node.remove();
    shown.clear();
    $("#asks-section").hidden = true;
    $("#sign-out").hidden = true;
    $("#viewer").textContent = "";
    $("#token-form").hidden = false;
    $("#token-error").hidden = !why;
    $("#token-error").textContent = why ? "Not signed in: " + why : "";
    setStatus("signed-out", "signed out");
  }

  document.addEventListener("click", (ev) => {
    const b = ev.target.closest("button[data-ask-id][data-option]");
    if (b && !b.disabled) answer(b);
  });
  $("#token-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const t = $("#token").value.trim();
    $("#token").value = "";
    if (!t) return;
    sessionStorage.setItem(TOKEN_KEY, t);
    setStatus("loading", "signing in…");
    clearTimeout(timer);
    refresh();
  });
  $("#sign-out").addEventListener("click", () => signedOut(""));
  setInterval(tick, 1000);

  // Ask for a token before the first call when the gateway needs one, so
  // that the page never sends a request it knows will be refused.
  async function start() {
    setStatus("loading", "loading…");
    let cfg = { auth: true, store: true };
    try { cfg = await api("/inbox/api/config"); } catch (e) { /* assume the strictest */ }
    if (!cfg.store) {
      setStatus("error", "no team inbox");
      $("#asks-section").hidden = false;
      $("#no-asks").textContent = "This gateway keeps no shared store, so it has no team inbox (start toolwarden serve with --store).";
      return;
    }
    if (cfg.auth && !sessionStorage.getItem(TOKEN_KEY)) return signedOut("");
    refresh();
  }
  start();
})();
