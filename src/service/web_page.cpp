// The page of `trainsim serve` (web_page.hpp). Its parts are raw string literals, each well below the 64 KB that
// some compilers allow one literal, joined once on first use. The look is that of the HTML reports
// (report/html_page.cpp): same fonts, colours and tables, so a run's report in its frame sits in a page that
// matches it.
//
// The script builds every element with createElement and puts API strings in with textContent or setAttribute;
// there is no innerHTML anywhere (tests/service/web_page_test.cpp checks), so a label or an error message that
// holds markup shows as text. It is plain ES2017 without a framework or build step, so the binary is the whole
// deployment and the page works where the server has no internet access.
#include "service/web_page.hpp"

#include <string>

namespace trainsim::service {

namespace {

constexpr std::string_view kPageHead = R"HTML(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="trainsim serve">
<title>trainsim</title>
<style>
:root { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d2330; background: #f6f7f9; }
body { max-width: 1240px; margin: 0 auto; padding: 8px 24px 48px; }
[hidden] { display: none !important; }
header.top { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 8px 16px;
  border-bottom: 1px solid #d5d9e0; padding-bottom: 6px; }
h1 { font-size: 1.5em; margin: 8px 0 4px; } h1 a { color: inherit; text-decoration: none; }
h1 .meta { font-size: 0.55em; font-weight: normal; margin-left: 10px; }
h2 { font-size: 1.15em; margin: 28px 0 8px; border-bottom: 1px solid #d5d9e0; padding-bottom: 4px; }
h3 { font-size: 1em; margin: 18px 0 6px; }
a { color: #1f4f9c; }
.meta { color: #4a5263; } .note { color: #4a5263; font-size: 0.92em; }
code, pre, textarea { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; }
code { background: #e8ebf0; padding: 1px 4px; border-radius: 3px; }
.bad { color: #b3261e; font-weight: 600; } .ok { color: #1e7b34; }
.token { display: flex; align-items: center; gap: 6px; font-size: 0.92em; }
.want { outline: 2px solid #b3261e; outline-offset: 1px; }
.msg { margin: 12px 0; padding: 8px 12px; border-radius: 6px; border: 1px solid #d5d9e0; background: #fff; }
.msg.error { border-color: #b3261e; background: #fbeeed; color: #6e1a15; }
.msg.ok { border-color: #1e7b34; background: #e7f4ea; }
.msg .key { display: block; margin-top: 6px; font-size: 1.05em; }
.msg .key code { font-size: 1.05em; font-weight: 600; background: #fff; border: 1px solid #b3261e; }
.msg a { margin-left: 8px; }
form.panel, .panel { background: #fff; border: 1px solid #d5d9e0; border-radius: 6px; padding: 10px 16px 14px; }
.row { display: flex; flex-wrap: wrap; gap: 10px 20px; align-items: flex-end; margin: 8px 0; }
label.field { display: flex; flex-direction: column; gap: 3px; font-size: 0.88em; color: #4a5263; }
label.check { font-size: 0.92em; margin-right: 14px; white-space: nowrap; }
label.block { display: block; font-size: 0.88em; color: #4a5263; margin: 10px 0 3px; }
textarea { width: 100%; box-sizing: border-box; font-size: 0.88em; border: 1px solid #c4c9d3; border-radius: 4px;
  padding: 6px 8px; background: #fcfcfd; color: inherit; }
textarea#scenario { min-height: 320px; white-space: pre; overflow-wrap: normal; overflow: auto; }
input, select, button { font: inherit; font-size: 0.92em; }
input[type=text], input[type=number], input[type=password], input[type=search], select {
  border: 1px solid #c4c9d3; border-radius: 4px; padding: 3px 6px; background: #fff; color: inherit; }
button { border: 1px solid #9aa2b1; border-radius: 4px; padding: 3px 12px; background: #eef0f4; color: inherit;
  cursor: pointer; }
button:hover:not(:disabled) { background: #e1e4ea; }
button.primary { background: #1f4f9c; border-color: #1f4f9c; color: #fff; font-weight: 600; padding: 6px 22px; }
button.primary:hover:not(:disabled) { background: #183f7d; }
button:disabled { opacity: 0.5; cursor: default; }
fieldset { border: 1px solid #d5d9e0; border-radius: 4px; margin: 10px 0 4px; padding: 4px 12px 10px; }
legend { font-size: 0.88em; color: #4a5263; padding: 0 4px; }
.hint { font-size: 0.82em; color: #5b6475; }
table { border-collapse: collapse; background: #fff; font-size: 0.9em; margin: 6px 0; }
th, td { border: 1px solid #d5d9e0; padding: 3px 8px; text-align: right; white-space: nowrap; }
th { background: #eef0f4; } td.l, th.l { text-align: left; } td.c, th.c { text-align: center; }
td.wrap { white-space: normal; max-width: 460px; overflow-wrap: anywhere; }
table.wide { width: 100%; }
tr.section th { text-align: left; background: #e3e6ec; }
tr.state-failed td { background: #fbeeed; } tr.empty td { color: #5b6475; text-align: left; padding: 10px; }
td.better { color: #1e7b34; font-weight: 600; background: #e7f4ea; }
td.worse { color: #b3261e; font-weight: 600; background: #fbeeed; }
.badge { display: inline-block; padding: 1px 9px; border-radius: 10px; font-size: 0.85em; font-weight: 600;
  background: #e8ebf0; color: #4a5263; }
.badge.running { background: #e3ecfa; color: #1f4f9c; } .badge.done { background: #e7f4ea; color: #1e7b34; }
.badge.failed { background: #fbeeed; color: #b3261e; } .badge.cancelled { background: #f4efe1; color: #7a5d00; }
progress { width: 90px; vertical-align: middle; }
.err-line { color: #b3261e; font-size: 0.88em; margin-top: 2px; }
.toolbar { display: flex; flex-wrap: wrap; gap: 8px 14px; align-items: center; margin: 6px 0; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 12px 0; }
.card { background: #fff; border: 1px solid #d5d9e0; border-radius: 6px; padding: 8px 14px; min-width: 130px; }
.card .label { font-size: 0.8em; color: #5b6475; text-transform: uppercase; letter-spacing: 0.04em; }
.card .value { font-size: 1.35em; font-weight: 600; } .card .sub { font-size: 0.85em; color: #5b6475; }
iframe.report { display: block; width: 100%; height: 85vh; min-height: 900px; border: 1px solid #d5d9e0;
  border-radius: 4px; background: #fff; margin-top: 8px; }
pre { background: #fff; border: 1px solid #d5d9e0; padding: 8px; overflow: auto; max-height: 600px; font-size: 0.85em; }
details { margin-top: 14px; } summary { cursor: pointer; color: #1f4f9c; }
.failure { border: 1px solid #b3261e; background: #fbeeed; border-radius: 6px; padding: 6px 14px 10px; }
.failure pre { white-space: pre-wrap; background: transparent; border: 0; padding: 0; max-height: none;
  font-size: 0.9em; }
div.scroll { overflow-x: auto; }
dl.times { display: grid; grid-template-columns: max-content auto; gap: 2px 14px; margin: 8px 0; font-size: 0.92em; }
dl.times dt { color: #5b6475; } dl.times dd { margin: 0; }
.links a, .links button { margin-right: 14px; }
</style>
</head>
)HTML";

// The views are all in the document from the start (hidden but for the current one), so every id a browser test
// drives exists whatever the route, and a view keeps what was typed into it when the user goes elsewhere and back.
// The token is a password field in a form with a (hidden) user name: Chromium logs a console warning for a password
// field outside a form, and password managers can then keep the token.
constexpr std::string_view kPageBody = R"HTML(<body>
<header class="top">
  <h1><a href="#/">trainsim</a><span id="server-info" class="meta"></span></h1>
  <form id="token-form" class="token" novalidate>
    <input type="text" name="username" value="trainsim" autocomplete="username" hidden>
    <label for="token">Token</label>
    <input id="token" name="token" type="password" size="22" autocomplete="current-password" spellcheck="false"
           placeholder="only if the server asks" aria-describedby="token-state">
    <button type="submit" id="token-save">Save</button>
    <button type="button" id="token-forget">Forget</button>
    <span id="token-state" class="note"></span>
  </form>
</header>
<div id="message" class="msg" role="status" aria-live="polite" hidden></div>
<noscript><p class="msg error">This page needs JavaScript; the API works without it (docs/service.md).</p></noscript>
<main>

<section id="home-view" hidden>
<h2>Submit a job</h2>
<form id="submit-form" class="panel" novalidate>
  <div class="row">
    <label class="field">Command
      <select id="command" name="command">
        <option value="run">run: one iteration</option>
        <option value="memory">memory: per-GPU memory</option>
        <option value="nccl-test">nccl-test: a collective's bandwidth</option>
        <option value="sweep">sweep: a grid of runs</option>
        <option value="tune">tune: best parallelism</option>
        <option value="plan">plan: the whole training run</option>
      </select>
    </label>
    <label class="field">Label
      <input id="label" type="text" size="22" value="scenario.yaml" spellcheck="false">
    </label>
    <label class="field">Load a file
      <input id="file" type="file" accept=".yaml,.yml,.json,application/yaml,text/yaml,application/json">
    </label>
    <label class="field">Model preset
      <select id="preset"><option value="">(as in the scenario)</option></select>
    </label>
    <label class="field">GPU
      <select id="gpu"><option value="">(as in the scenario)</option></select>
    </label>
  </div>
  <label class="block" for="scenario">Scenario (YAML)</label>
  <textarea id="scenario" name="scenario" rows="18" spellcheck="false" autocomplete="off" wrap="off"></textarea>
  <label class="block" for="overrides">Overrides: one <code>key=value</code> per line, as <code>--set</code></label>
  <textarea id="overrides" name="overrides" rows="3" spellcheck="false" autocomplete="off"
            placeholder="parallelism.tensor=4"></textarea>

  <fieldset data-command="run">
    <legend>run options</legend>
    <label class="check"><input id="opt-run-explain" type="checkbox"> explain (what bounds the iteration)</label>
    <label class="check"><input id="opt-run-allow_oom" type="checkbox"> allow_oom (run even if memory does not
      fit)</label>
    <label class="check"><input id="opt-run-per_rank" type="checkbox"> per_rank (every rank's times)</label>
    <label class="check"><input id="opt-run-trace" type="checkbox"> trace (a Chrome trace, and the timeline in the
      report)</label>
  </fieldset>
  <fieldset data-command="memory" hidden>
    <legend>memory options</legend>
    <label class="check"><input id="opt-memory-allow_oom" type="checkbox"> allow_oom (a result even when it does
      not fit)</label>
  </fieldset>
  <fieldset data-command="nccl-test" hidden>
    <legend>nccl-test options</legend>
    <div class="row">
      <label class="field">op
        <select id="opt-nccl-op">
          <option value="all_reduce">all_reduce</option><option value="all_gather">all_gather</option>
          <option value="reduce_scatter">reduce_scatter</option><option value="broadcast">broadcast</option>
          <option value="reduce">reduce</option><option value="alltoall">alltoall</option>
          <option value="sendrecv">sendrecv</option>
        </select>
      </label>
      <label class="field">minbytes <input id="opt-nccl-minbytes" type="text" size="8" value="8"></label>
      <label class="field">maxbytes <input id="opt-nccl-maxbytes" type="text" size="8" value="1G"></label>
      <label class="field">stepfactor
        <input id="opt-nccl-stepfactor" type="number" min="1" step="any" value="2" style="width: 6em"></label>
    </div>
    <p class="hint">Sizes in bytes with an optional K, M or G suffix (powers of 1024), as nccl-tests' -b, -e and -f.</p>
  </fieldset>
  <fieldset data-command="sweep" hidden>
    <legend>sweep options</legend>
    <label class="block" for="opt-sweep-vary">vary: one <code>key=v1,v2,...</code> per line (a grid over all of
      them)</label>
    <textarea id="opt-sweep-vary" rows="2" spellcheck="false">cluster.nic_gbps=100,200,400</textarea>
    <label class="block" for="opt-sweep-zip">zip: one <code>key=v1,v2,...</code> per line (varied together, same
      length)</label>
    <textarea id="opt-sweep-zip" rows="2" spellcheck="false"></textarea>
    <label class="check"><input id="opt-sweep-allow_oom" type="checkbox"> allow_oom</label>
  </fieldset>
  <fieldset data-command="tune" hidden>
    <legend>tune options</legend>
    <label class="block" for="opt-tune-space">space: one <code>key=v1,v2</code> per line (empty: the default search
      space)</label>
    <textarea id="opt-tune-space" rows="2" spellcheck="false"></textarea>
    <div class="row">
      <label class="field">top
        <input id="opt-tune-top" type="number" min="1" max="100" step="1" value="5" style="width: 5em"></label>
      <label class="field">objective
        <select id="opt-tune-objective">
          <option value="tokens_per_s">tokens_per_s (fastest)</option>
          <option value="cost">cost (needs a GPU-hour price)</option>
          <option value="time_to_train">time_to_train (needs tokens)</option>
          <option value="days">days of the whole run (needs tokens)</option>
          <option value="energy">energy of the whole run (needs tokens)</option>
        </select>
      </label>
      <label class="field">gpu_hour_price (USD)
        <input id="opt-tune-gpu_hour_price" type="number" min="0" step="any" style="width: 7em"></label>
      <label class="field">tokens <input id="opt-tune-tokens" type="text" size="8" placeholder="15T"></label>
    </div>
  </fieldset>
  <fieldset data-command="plan" hidden>
    <legend>plan options</legend>
    <div class="row">
      <label class="field">train for
        <select id="opt-plan-target">
          <option value="tokens">tokens</option><option value="days">days</option>
          <option value="iterations">iterations</option>
        </select>
      </label>
      <label class="field">amount <input id="opt-plan-amount" type="text" size="8" value="15T"></label>
      <label class="field">trials
        <input id="opt-plan-trials" type="number" min="0" step="1" value="0" style="width: 6em"></label>
    </div>
    <p class="hint">Tokens may carry a K, M, B or T suffix. Trials above 0 add a Monte Carlo of failures.</p>
  </fieldset>
  <div class="row">
    <button id="submit" type="submit" class="primary">Submit</button>
    <span class="note">The server checks the scenario before it queues the job; a mistake comes back at once.</span>
  </div>
</form>

<h2>Jobs</h2>
<div class="toolbar">
  <label>State
    <select id="filter-state">
      <option value="">all</option><option value="queued">queued</option><option value="running">running</option>
      <option value="done">done</option><option value="failed">failed</option>
      <option value="cancelled">cancelled</option>
    </select>
  </label>
  <label>Search
    <input id="filter-q" type="search" size="22" placeholder="id, label or command" spellcheck="false"></label>
  <button type="button" id="compare-button" disabled>Compare</button>
  <span id="compare-info" class="note"></span>
</div>
<div class="scroll">
<table class="wide" id="jobs-table">
  <thead><tr>
    <th class="c" scope="col" title="pick two done runs to compare">pick</th><th class="l" scope="col">state</th>
    <th class="l" scope="col">progress</th><th class="l" scope="col">label</th><th class="l" scope="col">command</th>
    <th class="l" scope="col">created</th><th scope="col">took</th><th class="l" scope="col">id</th>
    <th class="l" scope="col"></th>
  </tr></thead>
  <tbody id="jobs"></tbody>
</table>
</div>
<div class="toolbar">
  <button type="button" id="prev" disabled>Newer</button>
  <span id="page-info" class="note"></span>
  <button type="button" id="next" disabled>Older</button>
</div>
</section>

<section id="job-view" hidden>
<p><a href="#/">&larr; all jobs</a></p>
<h2 id="job-title">Job</h2>
<p>State: <span id="job-state" class="badge">loading</span>
  <progress id="job-progress" max="1" value="0" aria-label="progress" hidden></progress>
  <span id="job-percent" class="note"></span>
  <button type="button" id="job-cancel" hidden>Cancel</button></p>
<dl id="job-times" class="times"></dl>
<p class="note" id="share-note">Share this job: the address of this page is its link (<code id="share-link"></code>);
  whoever opens it needs access to this server, and the token when it asks for one.</p>
<div id="result"></div>
</section>

<section id="compare-view" hidden>
<p><a href="#/">&larr; all jobs</a></p>
<h2>Compare two results</h2>
<p id="compare-heading" class="meta"></p>
<p class="note">Change is B / A &minus; 1. Green: B is better (less time, memory or cost; more throughput); red: worse.
  The address of this page is its link.</p>
<div class="scroll"><table id="compare-table"></table></div>
</section>

</main>
)HTML";

// Helpers, the API client, the token and the router.
constexpr std::string_view kPageScriptBase = R"JS(<script>
(function () {
  "use strict";

  function $(id) { return document.getElementById(id); }

  // An element with attributes (set as attribute text, never parsed as markup), "text" as its textContent, "on*"
  // as listeners, and children: nodes, or strings that become text nodes.
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) {
      var v = attrs[name];
      if (v === null || v === undefined || v === false) return;
      if (name === "text") node.textContent = String(v);
      else if (name === "className") node.className = String(v);
      else if (name.slice(0, 2) === "on") node.addEventListener(name.slice(2), v);
      else node.setAttribute(name, v === true ? "" : String(v));
    });
    return add(node, children);
  }
  function add(node, children) {
    if (children === null || children === undefined) return node;
    (Array.isArray(children) ? children : [children]).forEach(function (c) {
      if (c === null || c === undefined || c === false) return;
      node.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
    });
    return node;
  }
  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  }
  function enc(s) { return encodeURIComponent(String(s)); }
  function str(v) { return v === null || v === undefined ? "" : String(v); }
  function isObject(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }
  function isNumber(v) { return typeof v === "number" && isFinite(v); }
  // Job ids are 16 hex digits today; anything URL-safe of a sane length is let through to the server to judge.
  function validId(id) { return typeof id === "string" && /^[A-Za-z0-9_-]{1,64}$/.test(id); }
  // A link the API gave (job.links): same origin and under /api/ only, so an odd value cannot become a javascript:
  // or off-site URL.
  function apiLink(links, name, fallback) {
    var v = isObject(links) ? links[name] : null;
    return typeof v === "string" && /^\/api\/[A-Za-z0-9_.\/-]*$/.test(v) ? v : fallback;
  }

  function fmtNum(x) {
    if (!isNumber(x)) return x === null || x === undefined ? "" : String(x);
    if (Number.isInteger(x)) return Math.abs(x) >= 1e15 ? x.toExponential(4) : String(x);
    var a = Math.abs(x);
    if (a >= 1e6 || a < 1e-3) return x.toExponential(4);
    return String(Number(x.toPrecision(6)));
  }
  function fmtSeconds(s) {
    if (!isNumber(s) || s < 0) return "";
    if (s < 1) return Math.round(s * 1000) + " ms";
    if (s < 120) return s.toFixed(1) + " s";
    if (s < 7200) return (s / 60).toFixed(1) + " min";
    return (s / 3600).toFixed(1) + " h";
  }
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function when(ms) {
    if (!isNumber(ms) || ms <= 0) return "";
    var d = new Date(ms);
    return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " + pad(d.getHours()) + ":" +
           pad(d.getMinutes()) + ":" + pad(d.getSeconds());
  }
  function shorten(s, n) { return s.length > n ? s.slice(0, n - 1) + "\u2026" : s; }
  // Non-empty lines, trimmed; lines starting with # are comments.
  function lines(text) {
    return String(text).split("\n").map(function (s) { return s.trim(); }).filter(function (s) {
      return s !== "" && s.charAt(0) !== "#";
    });
  }

  var STATES = ["queued", "running", "done", "failed", "cancelled"];
  function stateClass(s) { return STATES.indexOf(s) >= 0 ? s : "unknown"; }
  function badge(state) { return el("span", { className: "badge " + stateClass(state), text: str(state) || "?" }); }
  function isJob(j) { return isObject(j) && typeof j.id === "string"; }
  function busy(state) { return state === "queued" || state === "running"; }

  // ---- the status line ----

  // What just happened, or what went wrong and the scenario key it names (in <code>, on a line of its own, since it
  // is what the user has to find and fix).
  var offline = false;  // the status line says the server cannot be reached
  function say(kind, text, key, extra) {
    offline = false;
    var box = clear($("message"));
    box.className = "msg" + (kind ? " " + kind : "");
    box.hidden = !text;
    if (!text) return;
    add(box, el("span", { id: "message-text", text: text }));
    if (key) add(box, el("span", { className: "key" }, ["key: ", el("code", { id: "message-key", text: key })]));
    if (extra) add(box, extra);
  }

  // ---- the token ----

  // Kept in localStorage so a reload or a shared link opened later finds it; in memory only where storage is off.
  var TOKEN_KEY = "trainsim.token";
  var token = "";
  try { token = window.localStorage.getItem(TOKEN_KEY) || ""; } catch (e) { token = ""; }
  function showTokenState() {
    $("token-state").textContent = token ? "saved in this browser" : "";
    $("token").value = token;
  }
  function saveToken(t) {
    token = t;
    try {
      if (t) window.localStorage.setItem(TOKEN_KEY, t);
      else window.localStorage.removeItem(TOKEN_KEY);
    } catch (e) { /* storage off (private window): the token lasts as long as this page */ }
    $("token").classList.remove("want");
    showTokenState();
  }
  function askForToken() {
    say("error", "This server needs an access token. Enter it in the Token field at the top and press Save " +
                 "(a token is one line of the server's --token-file: ask whoever runs it).");
    $("token").classList.add("want");
  }

  // ---- the API ----

  function apiError(status, data, fallback) {
    var e = new Error(isObject(data) && typeof data.error === "string" && data.error ? data.error : fallback);
    e.status = status;
    e.key = isObject(data) && typeof data.key === "string" && data.key ? data.key : null;
    e.state = isObject(data) && typeof data.state === "string" ? data.state : null;
    return e;
  }

  // fetch() with the token; resolves to the parsed JSON (or the text with asText), rejects with an Error that
  // carries the HTTP status (0: no answer), the API's message and the key it names. Never throws synchronously.
  function api(method, path, body, asText) {
    var headers = {};
    if (token) headers.Authorization = "Bearer " + token;
    var init = { method: method, headers: headers, cache: "no-store" };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    var request;
    try { request = fetch(path, init); } catch (e) { request = Promise.reject(e); }
    return request.then(function (res) {
      return res.text().then(function (text) {
        var data = null;
        if (res.ok && asText) return text;
        try { data = JSON.parse(text); } catch (e) { data = null; }
        if (res.ok) {
          if (data === null && text.trim() !== "null")
            throw apiError(res.status, null, path + ": the answer is not JSON");
          return data;
        }
        var err = apiError(res.status, data, "HTTP " + res.status + " from " + path);
        if (res.status === 429 && res.headers.get("Retry-After"))
          err.message += " (retry after " + res.headers.get("Retry-After") + " s)";
        throw err;
      });
    }, function (e) {
      var why = e && e.message ? e.message : "no answer";
      var err = new Error(location.protocol === "file:"
          ? "This page was opened as a file, so it has no server to ask (" + why + "). Run `trainsim serve` and " +
            "open the address it prints."
          : "Cannot reach the trainsim server (" + why + "); it may be restarting.");
      err.status = 0;
      err.key = null;
      throw err;
    });
  }

  // Shows a failed call in the status line; a 401 becomes the request for a token.
  function report(err, what) {
    if (err && err.status === 401) { askForToken(); return; }
    var text = err && err.message ? err.message : String(err);
    say("error", what ? what + ": " + text : text, err ? err.key : null);
    offline = !!err && err.status === 0;
  }
  // A poll that gets an answer again takes down the message that the server could not be reached.
  function reachable() { if (offline) say(""); }

  // ---- routes: #/ (home), #/job/ID, #/compare/A/B ----

  // A view's polling is one timer; a route change bumps the generation, so answers and timers of the view left
  // behind do nothing.
  var generation = 0, timer = 0, blobs = [];
  var notice = "";  // what the next view shows first (route() otherwise clears the status line)
  function later(fn, ms) {
    var gen = generation;
    clearTimeout(timer);
    timer = setTimeout(function () { if (gen === generation) fn(); }, ms);
  }
  function current(gen) { return gen === generation; }
  function blobUrl(text, type) {
    var url = URL.createObjectURL(new Blob([text], { type: type }));
    blobs.push(url);
    return url;
  }

  function setView(name, title) {
    ["home", "job", "compare"].forEach(function (v) { $(v + "-view").hidden = v !== name; });
    document.title = title ? title + " \u2013 trainsim" : "trainsim";
  }

  function route() {
    generation++;
    clearTimeout(timer);
    blobs.forEach(function (u) { URL.revokeObjectURL(u); });
    blobs = [];
    say(notice ? "ok" : "", notice || "");
    notice = "";
    var hash = location.hash.replace(/^#\/?/, "");
    var parts = hash.split("/").filter(function (p) { return p !== ""; }).map(function (p) {
      try { return decodeURIComponent(p); } catch (e) { return p; }
    });
    if (parts.length === 2 && parts[0] === "job" && validId(parts[1])) return showJob(parts[1]);
    if (parts.length === 3 && parts[0] === "compare" && validId(parts[1]) && validId(parts[2]))
      return showCompare(parts[1], parts[2]);
    showHome();
    if (parts.length) say("error", "There is no page #/" + hash + " here: this is the job list.");
  }
)JS";

// The home view: the submit form, its pickers and options, and the job list.
constexpr std::string_view kPageScriptHome = R"JS(
  // ---- the scenario's text: model.preset and cluster.gpu by lines ----

  // The lines of a block mapping `section:` at column 0: [start, end), start being the "section:" line.
  function yamlBlock(ls, section) {
    var head = new RegExp("^" + section + "\\s*:\\s*(#.*)?$");
    for (var i = 0; i < ls.length; i++) {
      if (!head.test(ls[i])) continue;
      var end = i + 1;
      while (end < ls.length && (/^\s/.test(ls[end]) || /^\s*(#.*)?$/.test(ls[end]))) end++;
      return { start: i, end: end };
    }
    return null;
  }
  // The indentation of the block's keys (that of its first key line; two spaces in an empty block).
  function childIndent(ls, b) {
    for (var i = b.start + 1; i < b.end; i++) {
      var m = /^([ \t]+)[^\s#]/.exec(ls[i]);
      if (m) return m[1];
    }
    return "  ";
  }
  function findKey(ls, b, indent, key) {
    var re = new RegExp("^" + indent + key + "\\s*:(\\s|$)");
    for (var i = b.start + 1; i < b.end; i++) if (re.test(ls[i])) return i;
    return -1;
  }
  // A flow mapping on one line, `section: {a: 1, key: v}`: the index of its line and what is between the braces.
  function flowLine(ls, section) {
    var re = new RegExp("^(" + section + "\\s*:\\s*\\{)([^{}]*)(\\}\\s*(#.*)?)$");
    for (var i = 0; i < ls.length; i++) {
      var m = re.exec(ls[i]);
      if (m) return { index: i, open: m[1], inner: m[2], close: m[3] };
    }
    return null;
  }
  function unquote(v) {
    v = v.replace(/\s+#.*$/, "").trim();
    if (/^"(?:[^"\\]|\\.)*"$/.test(v)) { try { return JSON.parse(v); } catch (e) { return v.slice(1, -1); } }
    if (/^'.*'$/.test(v)) return v.slice(1, -1).replace(/''/g, "'");
    return v;
  }
  function yamlScalar(v) { return /^[A-Za-z0-9_.+\/-]+$/.test(v) ? v : JSON.stringify(v); }

  function readYamlKey(text, section, key) {
    var ls = text.split("\n");
    var b = yamlBlock(ls, section);
    if (b) {
      var i = findKey(ls, b, childIndent(ls, b), key);
      return i < 0 ? null : unquote(ls[i].slice(ls[i].indexOf(":") + 1));
    }
    var f = flowLine(ls, section);
    if (!f) return null;
    var m = new RegExp("(?:^|,)\\s*" + key + "\\s*:\\s*([^,]*)").exec(f.inner);
    return m ? unquote(m[1]) : null;
  }

  // The text with section.key set to value, or null when the text is not YAML this can edit by lines (JSON, a
  // section written in another form): the user then edits it by hand, told so.
  function setYamlKey(text, section, key, value) {
    if (/^\s*[{\[]/.test(text)) return null;
    var ls = text.split("\n");
    var line = key + ": " + yamlScalar(value);
    var b = yamlBlock(ls, section);
    if (b) {
      var indent = childIndent(ls, b);
      var i = findKey(ls, b, indent, key);
      if (i >= 0) {
        var comment = /\s(#.*)$/.exec(ls[i].slice(ls[i].indexOf(":") + 1));
        ls[i] = indent + line + (comment ? "  " + comment[1] : "");
      } else {
        ls.splice(b.start + 1, 0, indent + line);
      }
      return ls.join("\n");
    }
    var f = flowLine(ls, section);
    if (f) {
      var re = new RegExp("((?:^|,)\\s*)" + key + "\\s*:\\s*[^,]*");
      var inner = re.test(f.inner) ? f.inner.replace(re, function (all, lead) { return lead + line; })
                                   : (f.inner.trim() ? line + ", " + f.inner.trim() : line);
      ls[f.index] = f.open + inner + f.close;
      return ls.join("\n");
    }
    if (ls.some(function (l) { return new RegExp("^" + section + "\\s*:").test(l); })) return null;
    var out = text.replace(/\s*$/, "");
    return (out ? out + "\n" : "") + section + ":\n  " + line + "\n";
  }

  var PICKERS = [{ id: "preset", section: "model", key: "preset" }, { id: "gpu", section: "cluster", key: "gpu" }];

  // The pickers show what the scenario's text names, when it is one of theirs.
  function syncPickers() {
    var text = $("scenario").value;
    PICKERS.forEach(function (p) {
      var v = readYamlKey(text, p.section, p.key), select = $(p.id);
      var known = v !== null && Array.prototype.some.call(select.options, function (o) { return o.value === v; });
      select.value = known ? v : "";
    });
  }
  function pick(p) {
    var value = $(p.id).value;
    if (!value) return;
    var text = setYamlKey($("scenario").value, p.section, p.key, value);
    var key = p.section + "." + p.key;
    if (text === null) {
      say("error", "Could not set " + key + " in this scenario's text (it is JSON, or the section is written in a " +
                   "form the picker does not edit): set it by hand.", key);
      syncPickers();
      return;
    }
    $("scenario").value = text;
    say("ok", key + " is now " + value + ".");
  }
  function fillPicker(select, items, label) {
    while (select.options.length > 1) select.remove(1);
    (Array.isArray(items) ? items : []).forEach(function (it) {
      if (!isObject(it) || typeof it.id !== "string" || !it.id) return;
      select.appendChild(el("option", { value: it.id, title: str(it.description) || null, text: label(it) }));
    });
  }

  var presetsLoaded = false;
  function loadPresets() {
    api("GET", "/api/presets").then(function (p) {
      if (!isObject(p)) throw new Error("/api/presets: not an object");
      presetsLoaded = true;
      fillPicker($("preset"), p.models, function (m) { return m.id; });
      fillPicker($("gpu"), p.gpus, function (g) {
        return g.id + (isNumber(g.memory_gib) ? " (" + fmtNum(g.memory_gib) + " GiB)" : "");
      });
      if (!$("scenario").value.trim() && typeof p.example === "string") $("scenario").value = p.example;
      syncPickers();
    }).catch(function (e) { report(e, "presets"); });
  }

  function loadFile() {
    var input = $("file"), file = input.files && input.files[0];
    if (!file) return;
    var reader = new FileReader();
    reader.onload = function () {
      $("scenario").value = String(reader.result).replace(/\r\n/g, "\n");
      $("label").value = file.name;
      syncPickers();
      say("ok", "Loaded " + file.name + " (" + file.size + " bytes).");
    };
    reader.onerror = function () { say("error", "Could not read " + file.name + "."); };
    reader.readAsText(file);
    input.value = "";  // the same file can be loaded again after edits
  }

  function showOptions() {
    var command = $("command").value;
    Array.prototype.forEach.call(document.querySelectorAll("fieldset[data-command]"), function (f) {
      f.hidden = f.getAttribute("data-command") !== command;
    });
  }

  function fieldError(key, text) {
    var e = new Error(text);
    e.key = key;
    return e;
  }
  function textOf(id) {
    var t = $(id).value.trim();
    return t === "" ? undefined : t;
  }
  function intOf(id, key) {
    var t = textOf(id);
    if (t === undefined) return undefined;
    if (!/^-?\d+$/.test(t)) throw fieldError(key, "expected a whole number, got '" + t + "'");
    return parseInt(t, 10);
  }
  function numberOf(id, key) {
    var t = textOf(id);
    if (t === undefined) return undefined;
    var n = Number(t);
    if (!isFinite(n)) throw fieldError(key, "expected a number, got '" + t + "'");
    return n;
  }
  function checked(id) { return $(id).checked; }

  // The options object of a command, from the inputs of its fieldset; empty inputs are left out (the server's
  // defaults apply).
  function optionsOf(command) {
    var o = {};
    function put(name, v) { if (v !== undefined) o[name] = v; }
    if (command === "run") {
      o.explain = checked("opt-run-explain");
      o.allow_oom = checked("opt-run-allow_oom");
      o.per_rank = checked("opt-run-per_rank");
      o.trace = checked("opt-run-trace");
    } else if (command === "memory") {
      o.allow_oom = checked("opt-memory-allow_oom");
    } else if (command === "nccl-test") {
      put("op", textOf("opt-nccl-op"));
      put("minbytes", textOf("opt-nccl-minbytes"));
      put("maxbytes", textOf("opt-nccl-maxbytes"));
      put("stepfactor", numberOf("opt-nccl-stepfactor", "options.stepfactor"));
    } else if (command === "sweep") {
      o.vary = lines($("opt-sweep-vary").value);
      o.zip = lines($("opt-sweep-zip").value);
      o.allow_oom = checked("opt-sweep-allow_oom");
    } else if (command === "tune") {
      o.space = lines($("opt-tune-space").value);
      put("top", intOf("opt-tune-top", "options.top"));
      put("objective", textOf("opt-tune-objective"));
      put("gpu_hour_price", numberOf("opt-tune-gpu_hour_price", "options.gpu_hour_price"));
      put("tokens", textOf("opt-tune-tokens"));
    } else if (command === "plan") {
      var target = $("opt-plan-target").value;
      var amount = textOf("opt-plan-amount");
      if (amount === undefined) throw fieldError("options." + target, "plan needs an amount of " + target);
      o[target] = amount;
      put("trials", intOf("opt-plan-trials", "options.trials"));
    }
    return o;
  }

  function submitJob(ev) {
    ev.preventDefault();
    var command = $("command").value, body;
    try {
      body = {
        command: command,
        label: $("label").value.trim() || "scenario.yaml",
        scenario: $("scenario").value,
        overrides: lines($("overrides").value).map(function (s) { return s.replace(/^--set\s+/, ""); }),
        options: optionsOf(command)
      };
    } catch (e) {
      say("error", "Not submitted: " + e.message, e.key);
      return;
    }
    if (!body.scenario.trim()) {
      say("error", "The scenario is empty: paste a YAML scenario or load a file.", "scenario");
      return;
    }
    var button = $("submit");
    button.disabled = true;
    say("", "");
    api("POST", "/api/jobs", body).then(function (job) {
      var id = isObject(job) ? str(job.id) : "";
      say("ok", "Job " + id + " is " + (isObject(job) && job.state ? str(job.state) : "queued") + ".", null,
          validId(id) ? el("a", { href: "#/job/" + enc(id), text: "Open its page" }) : null);
      list.offset = 0;
      loadJobs();
    }).catch(function (e) {
      var what = { 400: "The server refused the job", 413: "The job is too large for this server",
                   429: "The server's queue is full" }[e.status];
      report(e, what || "Not submitted");
    }).then(function () { button.disabled = false; });
  }

  // ---- the job list ----

  var list = { state: "", q: "", offset: 0, limit: 50, shown: null, picked: [] };
  var searchTimer = 0;

  function loadJobs() {
    var gen = generation;
    var query = "?state=" + enc(list.state) + "&q=" + enc(list.q) + "&limit=" + list.limit + "&offset=" + list.offset;
    loadHealth();
    api("GET", "/api/jobs" + query).then(function (page) {
      if (!current(gen)) return;
      reachable();
      var jobs = isObject(page) && Array.isArray(page.jobs) ? page.jobs.filter(isJob) : [];
      var total = isObject(page) && isNumber(page.total) ? page.total : jobs.length;
      var seen = JSON.stringify(page);
      if (seen !== list.shown) {  // a poll that changes nothing leaves the table (and the focus in it) alone
        list.shown = seen;
        renderJobs(jobs, total);
      }
      later(loadJobs, jobs.some(function (j) { return busy(j.state); }) ? 1000 : 5000);
    }).catch(function (e) {
      if (!current(gen)) return;
      report(e, "job list");
      if (list.shown === null) renderJobs([], 0, "The job list could not be loaded.");
      if (e.status !== 401) later(loadJobs, 5000);
    });
  }

  function loadHealth() {
    api("GET", "/api/health").then(function (h) {
      if (!isObject(h)) return;
      $("server-info").textContent = (h.version ? "version " + str(h.version) + " \u00b7 " : "") + fmtNum(h.queued) +
          " queued \u00b7 " + fmtNum(h.running) + " running \u00b7 " + fmtNum(h.workers) + " workers";
    }).catch(function () { $("server-info").textContent = "server not reachable"; });
  }

  function renderJobs(jobs, total, emptyText) {
    var body = clear($("jobs"));
    if (!jobs.length) {
      var text = emptyText || (list.state || list.q ? "No job matches." :
                               list.offset > 0 ? "No more jobs." : "No jobs yet: submit one above.");
      body.appendChild(el("tr", { className: "empty" }, el("td", { colspan: "9", text: text })));
    }
    jobs.forEach(function (j) { body.appendChild(jobRow(j)); });
    $("page-info").textContent = jobs.length
        ? (list.offset + 1) + "\u2013" + (list.offset + jobs.length) + " of " + total : total + " jobs";
    $("prev").disabled = list.offset <= 0;
    $("next").disabled = list.offset + jobs.length >= total;
    updateCompare();
  }

  function jobRow(j) {
    var id = j.id, state = str(j.state), link = "#/job/" + enc(id);
    var pickBox = null;
    if (state === "done" && j.command === "run") {
      pickBox = el("input", { type: "checkbox", className: "pick", "data-id": id,
                              "aria-label": "compare " + (j.label ? str(j.label) : id) });
      pickBox.checked = list.picked.indexOf(id) >= 0;
      pickBox.addEventListener("change", function () { togglePick(id, pickBox.checked); });
    }
    var progress = null;
    if (state === "running") {
      var p = isNumber(j.progress) ? Math.min(1, Math.max(0, j.progress)) : 0;
      progress = [el("progress", { max: "1", value: String(p), "aria-label": "progress of " + id }),
                  " " + Math.round(p * 100) + " %"];
    } else if (state === "queued") {
      progress = el("span", { className: "note", text: "waiting" });
    }
    var label = [el("a", { href: link, text: j.label ? str(j.label) : "(no label)" })];
    if (state === "failed" && j.error)
      label.push(el("div", { className: "err-line", title: str(j.error), text: shorten(str(j.error), 160) }));
    var took = isNumber(j.started_ms) && isNumber(j.finished_ms) && j.started_ms > 0 && j.finished_ms >= j.started_ms
        ? fmtSeconds((j.finished_ms - j.started_ms) / 1000) : "";
    var cancel = null;
    if (busy(state)) {
      cancel = el("button", { type: "button", className: "cancel", text: "Cancel", "aria-label": "cancel job " + id });
      cancel.addEventListener("click", function () {
        cancel.disabled = true;
        cancelJob(id, function () { list.shown = null; loadJobs(); });
      });
    }
    return el("tr", { className: "state-" + stateClass(state), "data-id": id }, [
      el("td", { className: "c" }, pickBox),
      el("td", { className: "l" }, badge(state)),
      el("td", { className: "l" }, progress),
      el("td", { className: "l wrap" }, label),
      el("td", { className: "l", text: str(j.command) }),
      el("td", { className: "l", text: when(j.created_ms) }),
      el("td", { text: took }),
      el("td", { className: "l" }, el("a", { href: link }, el("code", { text: id }))),
      el("td", { className: "l" }, cancel)
    ]);
  }

  // Two done runs at most are picked; picking a third lets go of the first.
  function togglePick(id, on) {
    var p = list.picked.filter(function (x) { return x !== id; });
    if (on) p.push(id);
    while (p.length > 2) p.shift();
    list.picked = p;
    Array.prototype.forEach.call(document.querySelectorAll("#jobs input.pick"), function (box) {
      box.checked = p.indexOf(box.getAttribute("data-id")) >= 0;
    });
    updateCompare();
  }
  function updateCompare() {
    var n = list.picked.length;
    $("compare-button").disabled = n !== 2;
    $("compare-info").textContent = n === 2 ? "" : "pick two done runs to compare (" + n + " picked)";
  }

  function cancelJob(id, then) {
    api("DELETE", "/api/jobs/" + enc(id)).then(function () {
      say("ok", "Job " + id + " is cancelled.");
    }).catch(function (e) {
      if (e.status === 409)
        say("", "Job " + id + " had already finished" + (e.state ? " (" + e.state + ")" : "") + ".");
      else report(e, "cancel " + id);
    }).then(then);
  }

  function showHome() {
    setView("home", "");
    if (!presetsLoaded) loadPresets();
    list.shown = null;
    loadJobs();
  }
)JS";

// The job view and the compare view, then the wiring of the controls.
constexpr std::string_view kPageScriptViews = R"JS(
  // ---- one job ----

  var jobView = { id: "", outcome: "" };

  function showJob(id) {
    setView("job", "job " + id);
    jobView.id = id;
    jobView.outcome = "";
    $("job-title").textContent = "Job " + id;
    $("job-state").textContent = "loading";
    $("job-state").className = "badge";
    $("job-progress").hidden = true;
    $("job-percent").textContent = "";
    $("job-cancel").hidden = true;
    $("share-link").textContent = location.href;
    clear($("job-times"));
    clear($("result"));
    loadJob();
  }

  function loadJob() {
    var gen = generation, id = jobView.id;
    api("GET", "/api/jobs/" + enc(id)).then(function (j) {
      if (!current(gen)) return;
      reachable();
      if (!isJob(j)) throw new Error("the answer is not a job");
      var state = str(j.state);
      renderJobHead(j, state);
      if (busy(state)) return later(loadJob, 1000);
      if (jobView.outcome !== state) {
        jobView.outcome = state;
        renderOutcome(j, state);
      }
    }).catch(function (e) {
      if (!current(gen)) return;
      if (e.status === 404) {
        $("job-state").textContent = "not found";
        clear($("result")).appendChild(el("p", { className: "bad",
                                                 text: "There is no job " + id + " on this server." }));
        return;
      }
      report(e, "job " + id);
      if (e.status !== 401) later(loadJob, 5000);
    });
  }

  function renderJobHead(j, state) {
    var s = $("job-state");
    s.textContent = state || "?";
    s.className = "badge " + stateClass(state);
    var running = state === "running";
    var p = isNumber(j.progress) ? Math.min(1, Math.max(0, j.progress)) : 0;
    $("job-progress").hidden = !running;
    $("job-progress").value = p;
    $("job-percent").textContent = running ? Math.round(p * 100) + " %" : "";
    $("job-cancel").hidden = !busy(state);
    $("job-cancel").disabled = false;
    var rows = [["command", str(j.command)], ["label", str(j.label)], ["created", when(j.created_ms)]];
    if (isNumber(j.started_ms) && j.started_ms > 0) {
      rows.push(["started", when(j.started_ms)]);
      if (isNumber(j.created_ms)) rows.push(["waited", fmtSeconds((j.started_ms - j.created_ms) / 1000)]);
    }
    if (isNumber(j.finished_ms) && j.finished_ms > 0) {
      rows.push(["finished", when(j.finished_ms)]);
      if (isNumber(j.started_ms) && j.started_ms > 0)
        rows.push(["took", fmtSeconds((j.finished_ms - j.started_ms) / 1000)]);
    }
    if (isNumber(j.attempts) && j.attempts > 1)
      rows.push(["attempts", j.attempts + " (the server restarted while it ran)"]);
    var dl = clear($("job-times"));
    rows.forEach(function (r) { add(dl, [el("dt", { text: r[0] }), el("dd", { text: r[1] })]); });
  }

  function linksLine(j, resultUrl, resultText) {
    var p = el("p", { className: "links" });
    if (resultUrl) {
      // A plain link cannot send the token: with one, the JSON already fetched is offered as a blob instead.
      var href = token && resultText !== undefined ? blobUrl(resultText, "application/json") : resultUrl;
      add(p, el("a", { href: href, target: "_blank", rel: "noopener", id: "raw-json-link", text: "raw JSON" }));
    }
    if (!token) {
      add(p, el("a", { href: apiLink(j.links, "scenario", "/api/jobs/" + enc(j.id) + "/scenario"), target: "_blank",
                       rel: "noopener", text: "scenario as submitted" }));
    }
    add(p, el("button", { type: "button", id: "resubmit", text: "Edit and resubmit",
                          title: "load this job's scenario and command into the form",
                          onclick: function () { resubmit(j); } }));
    return p;
  }

  // The job's scenario as submitted and its command, into the form, to change and submit again. Overrides and
  // options are not part of the scenario: the form keeps what it has.
  function resubmit(j) {
    api("GET", apiLink(j.links, "scenario", "/api/jobs/" + enc(j.id) + "/scenario"), undefined, true)
        .then(function (text) {
          $("scenario").value = text;
          $("label").value = j.label ? str(j.label) : "scenario.yaml";
          if (Array.prototype.some.call($("command").options, function (o) { return o.value === j.command; }))
            $("command").value = j.command;
          showOptions();
          syncPickers();
          notice = "The scenario of job " + j.id + " is in the form; its overrides and options are not.";
          location.hash = "#/";
        }).catch(function (e) { report(e, "scenario of " + j.id); });
  }

  function renderOutcome(j, state) {
    var box = clear($("result"));
    if (state === "done") return j.command === "run" ? renderRun(j, box) : renderResult(j, box);
    if (state === "failed") {
      var f = el("div", { className: "failure", id: "job-error" },
                 [el("h3", { text: "The job failed" }), el("pre", { text: str(j.error) || "(no message)" })]);
      if (j.key) add(f, el("p", {}, ["key: ", el("code", { id: "job-error-key", text: str(j.key) })]));
      add(box, [f, linksLine(j, null)]);
      return;
    }
    if (state === "cancelled") return add(box, el("p", { className: "note", text: "The job was cancelled." }));
    add(box, el("p", { className: "note", text: "State: " + state }));
  }

  function card(label, value, sub) {
    return el("div", { className: "card" }, [el("div", { className: "label", text: label }),
                                             el("div", { className: "value", text: value }),
                                             sub ? el("div", { className: "sub", text: sub }) : null]);
  }

  // A run: its headline numbers, the links, and its HTML report in a frame.
  function renderRun(j, box) {
    var gen = generation;
    var resultUrl = apiLink(j.links, "result", "/api/jobs/" + enc(j.id) + "/result");
    // The API lists the report among the links when the run has one; a job without links gets the usual path.
    var htmlUrl = apiLink(j.links, "html", isObject(j.links) ? null : "/api/jobs/" + enc(j.id) + "/html");
    var cards = el("div", { className: "cards", id: "run-cards" });
    var links = el("p", { className: "links" });
    function showLinks(text) {
      var line = linksLine(j, resultUrl, text);
      if (!token && htmlUrl)
        add(line, el("a", { href: htmlUrl, target: "_blank", rel: "noopener", text: "report in a new tab" }));
      var traceUrl = apiLink(j.links, "trace", null);
      if (!token && traceUrl)
        add(line, el("a", { href: traceUrl, download: "trace-" + j.id + ".json", text: "Chrome trace" }));
      box.replaceChild(line, links);
    }
    // Sandboxed with scripts but not the same origin: the report's script runs, in an origin of its own, so nothing in
    // it can read this page's token.
    var frame = el("iframe", { className: "report", id: "report-frame", title: "HTML report of job " + j.id,
                               sandbox: "allow-scripts allow-popups" });
    add(box, [cards, links, htmlUrl ? frame : el("p", { className: "note", text: "This run has no HTML report." })]);
    // An iframe cannot send the token: with one, the report is fetched and handed to the frame as its document.
    if (htmlUrl && !token) frame.src = htmlUrl;
    else if (htmlUrl) api("GET", htmlUrl, undefined, true).then(function (html) {
      if (current(gen)) frame.srcdoc = html;
    }).catch(function (e) { if (current(gen)) report(e, "HTML report"); });
    api("GET", resultUrl, undefined, true).then(function (text) {
      if (!current(gen)) return;
      var r = null;
      try { r = JSON.parse(text); } catch (e) { r = null; }
      showLinks(text);
      if (!isObject(r)) return;
      if (isNumber(r.iteration_time_s)) add(cards, card("iteration", fmtNum(r.iteration_time_s) + " s"));
      if (isNumber(r.tokens_per_s)) add(cards, card("tokens / s", fmtNum(Math.round(r.tokens_per_s))));
      if (isNumber(r.mfu)) add(cards, card("MFU", (100 * r.mfu).toFixed(1) + " %"));
      if (isNumber(r.tflops_per_gpu)) add(cards, card("TFLOP/s per GPU", r.tflops_per_gpu.toFixed(1)));
      if (isObject(r.memory) && isNumber(r.memory.peak))
        add(cards, card("peak memory", r.memory.peak.toFixed(1) + " GiB",
                        isNumber(r.memory.capacity) ? "of " + r.memory.capacity.toFixed(1) + " GiB" +
                                                      (r.memory.fits === false ? ": does not fit" : "") : ""));
    }).catch(function (e) {
      if (!current(gen)) return;
      showLinks(undefined);
      report(e, "result");
    });
  }

  // Scalars of a row and of the objects in it, one level down ("values.cluster.nic_gbps", "result.mfu").
  function flatten(row) {
    var out = {};
    Object.keys(row).forEach(function (k) {
      var v = row[k];
      if (v === null || typeof v !== "object") out[k] = v;
      else if (isObject(v)) Object.keys(v).forEach(function (k2) {
        var v2 = v[k2];
        if (v2 === null || typeof v2 !== "object") out[k + "." + k2] = v2;
      });
    });
    return out;
  }
  // The array of rows a result holds: a sweep's points, a tune's ranked configurations, an nccl-test's sizes, or
  // the first array of objects at the top.
  function rowsOf(r) {
    var names = ["points", "ranked", "rows"].concat(Object.keys(r));
    for (var i = 0; i < names.length; i++) {
      var v = r[names[i]];
      if (Array.isArray(v) && v.length && v.every(isObject)) return { name: names[i], rows: v };
    }
    return null;
  }
  var MAX_COLUMNS = 40, MAX_ROWS = 2000;
  function rowsTable(rows) {
    var flat = rows.slice(0, MAX_ROWS).map(flatten), columns = [];
    flat.forEach(function (f) {
      Object.keys(f).forEach(function (k) { if (columns.indexOf(k) < 0) columns.push(k); });
    });
    columns = columns.filter(function (c) {
      return flat.some(function (f) { return f[c] !== null && f[c] !== undefined && f[c] !== ""; });
    });
    var dropped = Math.max(0, columns.length - MAX_COLUMNS);
    columns = columns.slice(0, MAX_COLUMNS);
    // A nested field is headed by its name without the object's ("mfu" for "result.mfu") where that is unambiguous;
    // the full name is the header's title.
    function heading(c) {
      var short = c.slice(c.indexOf(".") + 1);
      var clash = c.indexOf(".") < 0 || columns.some(function (o) {
        return o !== c && (o === short || o.slice(o.indexOf(".") + 1) === short);
      });
      return clash ? el("th", { scope: "col", text: c }) : el("th", { scope: "col", title: c, text: short });
    }
    var table = el("table", { id: "result-rows" }, [
      el("thead", {}, el("tr", {}, columns.map(heading))),
      el("tbody", {}, flat.map(function (f) {
        return el("tr", {}, columns.map(function (c) {
          var v = f[c];
          return isNumber(v) ? el("td", { title: String(v), text: fmtNum(v) })
                             : el("td", { className: "l", text: str(v) });
        }));
      }))
    ]);
    var notes = [];
    if (rows.length > MAX_ROWS) notes.push("the first " + MAX_ROWS + " of " + rows.length + " rows");
    if (dropped) notes.push(dropped + " more fields");
    return [el("div", { className: "scroll" }, table),
            notes.length ? el("p", { className: "note",
                                     text: "Shown: " + notes.join("; ") + "; all are in the JSON below." })
                         : null];
  }
  function scalarsTable(r) {
    var keys = Object.keys(r).filter(function (k) { return r[k] === null || typeof r[k] !== "object"; });
    if (!keys.length) return null;
    return el("table", { id: "result-summary" }, el("tbody", {}, keys.map(function (k) {
      var v = r[k];
      return el("tr", {}, [el("th", { className: "l", scope: "row", text: k }),
                           isNumber(v) ? el("td", { title: String(v), text: fmtNum(v) })
                                       : el("td", { className: "l wrap", text: str(v) })]);
    })));
  }

  // Any other command's result: its top-level numbers, its rows as a table, and the whole JSON.
  function renderResult(j, box) {
    var gen = generation;
    var resultUrl = apiLink(j.links, "result", "/api/jobs/" + enc(j.id) + "/result");
    add(box, el("p", { className: "note", text: "Loading the result\u2026" }));
    api("GET", resultUrl, undefined, true).then(function (text) {
      if (!current(gen)) return;
      clear(box);
      var r = null;
      try { r = JSON.parse(text); } catch (e) { r = null; }
      add(box, linksLine(j, resultUrl, text));
      var table = null;
      if (isObject(r)) {
        add(box, scalarsTable(r));
        var rows = rowsOf(r);
        if (rows) {
          table = rowsTable(rows.rows);
          add(box, [el("h3", { text: rows.name + " (" + rows.rows.length + ")" })].concat(table));
        }
      }
      var pretty = r === null ? text : JSON.stringify(r, null, 2);
      var details = el("details", { id: "result-json" }, [el("summary", { text: "JSON result" }),
                                                          el("pre", { text: pretty })]);
      details.open = !table && pretty.length < 200000;
      add(box, details);
    }).catch(function (e) {
      if (!current(gen)) return;
      clear(box);
      report(e, "result");
      add(box, el("p", { className: "bad", text: "The result could not be loaded: " + e.message }));
    });
  }

  // ---- compare ----

  // +1: more is better (throughput, utilisation), -1: less is better (times, memory, cost), 0: neither.
  function direction(name, inBreakdown) {
    var n = String(name).toLowerCase();
    if (/(^|[._])(rank|critical_rank|worst_stage|simulated_ranks|num_gpus|num_nodes|gpus|nodes|events|flows|ops|count)$/
        .test(n))
      return 0;
    if (/(per_s|per_gpu|mfu|hfu|tflops|throughput|goodput|busbw|algbw|efficiency|speedup|fits)/.test(n)) return 1;
    if (inBreakdown ||
        /(_s|_us|_ms|time|seconds|bytes|memory|peak|cost|usd|joules|energy|watts|days|hours|exposed|bubble)$/.test(n))
      return -1;
    return 0;
  }
  function compareRow(row, inBreakdown) {
    var change = isNumber(row.change) ? row.change : null;
    var text = change === null ? "\u2013" : (change > 0 ? "+" : "") + (100 * change).toFixed(1) + " %";
    var d = direction(row.name, inBreakdown), cls = "";
    if (change !== null && Math.abs(change) >= 0.0005 && d !== 0) cls = change * d > 0 ? "better" : "worse";
    return el("tr", {}, [el("td", { className: "l", text: str(row.name) }),
                         el("td", { title: str(row.a), text: fmtNum(row.a) }),
                         el("td", { title: str(row.b), text: fmtNum(row.b) }),
                         el("td", { className: cls || null, text: text })]);
  }
  function sideName(side, fallback) {
    if (!isObject(side)) return fallback;
    return (side.label ? str(side.label) + " " : "") + "(" + str(side.id || fallback) + ")";
  }

  function showCompare(a, b) {
    setView("compare", "compare");
    var gen = generation, table = clear($("compare-table"));
    $("compare-heading").textContent = "Loading\u2026";
    api("GET", "/api/compare?a=" + enc(a) + "&b=" + enc(b)).then(function (c) {
      if (!current(gen)) return;
      if (!isObject(c)) throw new Error("the answer is not an object");
      var heading = clear($("compare-heading"));
      add(heading, ["A: ", el("a", { href: "#/job/" + enc(a), text: sideName(c.a, a) }), " \u2003 B: ",
                    el("a", { href: "#/job/" + enc(b), text: sideName(c.b, b) })]);
      var fields = Array.isArray(c.fields) ? c.fields.filter(isObject) : [];
      var breakdown = Array.isArray(c.breakdown) ? c.breakdown.filter(isObject) : [];
      add(table, el("thead", {}, el("tr", {}, [el("th", { className: "l", scope: "col", text: "" }),
                                              el("th", { scope: "col", text: "A" }),
                                              el("th", { scope: "col", text: "B" }),
                                              el("th", { scope: "col", text: "change" })])));
      var body = el("tbody");
      if (fields.length) {
        add(body, el("tr", { className: "section" }, el("th", { colspan: "4", text: "Result" })));
        fields.forEach(function (r) { add(body, compareRow(r, false)); });
      }
      if (breakdown.length) {
        add(body, el("tr", { className: "section" },
                     el("th", { colspan: "4", text: "Breakdown of an iteration (s)" })));
        breakdown.forEach(function (r) { add(body, compareRow(r, true)); });
      }
      if (!fields.length && !breakdown.length)
        add(body, el("tr", { className: "empty" },
                     el("td", { colspan: "4", text: "The two results share no numbers." })));
      add(table, body);
    }).catch(function (e) {
      if (!current(gen)) return;
      $("compare-heading").textContent = "These two cannot be compared: " + e.message;
      report(e, "compare");
    });
  }

  // ---- wiring ----

  // A script error should not pass unseen: it is shown in the status line (a browser test checks it stays empty).
  window.addEventListener("error", function (e) { say("error", "Page error: " + (e.message || "unknown")); });
  window.addEventListener("unhandledrejection", function (e) {
    say("error", "Page error: " + (e.reason && e.reason.message ? e.reason.message : String(e.reason)));
  });

  $("token-form").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var t = $("token").value.trim();
    if (!/^[\x21-\x7e]*$/.test(t)) {
      say("error", "A token is one line of visible ASCII characters, without spaces.");
      return;
    }
    saveToken(t);
    route();
    if (t) say("ok", "Token saved in this browser.");
  });
  $("token-forget").addEventListener("click", function () {
    saveToken("");
    route();
    say("ok", "Token forgotten.");
  });
  $("submit-form").addEventListener("submit", submitJob);
  $("command").addEventListener("change", showOptions);
  $("file").addEventListener("change", loadFile);
  $("scenario").addEventListener("change", syncPickers);
  PICKERS.forEach(function (p) { $(p.id).addEventListener("change", function () { pick(p); }); });
  $("filter-state").addEventListener("change", function () {
    list.state = $("filter-state").value;
    list.offset = 0;
    list.shown = null;
    loadJobs();
  });
  $("filter-q").addEventListener("input", function () {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(function () {
      if ($("home-view").hidden) return;
      list.q = $("filter-q").value.trim();
      list.offset = 0;
      list.shown = null;
      loadJobs();
    }, 300);
  });
  $("prev").addEventListener("click", function () {
    list.offset = Math.max(0, list.offset - list.limit);
    list.shown = null;
    loadJobs();
  });
  $("next").addEventListener("click", function () {
    list.offset += list.limit;
    list.shown = null;
    loadJobs();
  });
  $("compare-button").addEventListener("click", function () {
    if (list.picked.length === 2) location.hash = "#/compare/" + enc(list.picked[0]) + "/" + enc(list.picked[1]);
  });
  $("job-cancel").addEventListener("click", function () {
    $("job-cancel").disabled = true;
    cancelJob(jobView.id, function () { if (!$("job-view").hidden) loadJob(); });
  });
  window.addEventListener("hashchange", route);

  showTokenState();
  showOptions();
  route();
  if ($("home-view").hidden) loadHealth();  // the home view asks at each refresh of the list
  document.body.setAttribute("data-js", "ready");
})();
</script>
</body>
</html>
)JS";

}  // namespace

std::string_view web_page() {
  static const std::string page = [] {
    std::string p;
    for (std::string_view part : {kPageHead, kPageBody, kPageScriptBase, kPageScriptHome, kPageScriptViews}) p += part;
    return p;
  }();
  return page;
}

}  // namespace trainsim::service
