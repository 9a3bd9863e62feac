// The agentic run viewer: the runs list (index.html) and one run's page (run.html).
// Plain browser JS, no build step, no framework. It reads the viewer's JSON API and, on the run
// page, follows /api/runs/{id}/stream (server-sent events: each "run" event is a whole RunView).
// The graph is drawn by Mermaid 11.17.2, bundled in static/vendor/ (MIT, see LICENSE-mermaid).
// Every piece of run data is put in the page with textContent or attributes, never innerHTML.
"use strict";

const STATUSES = ["completed", "running", "retrying", "failed", "pending"];
const FINISHED = new Set(["completed", "failed"]);
// The path the viewer is mounted under ("" at the root; "/ui" in `agentic serve --ui`), set by
// the server on <body data-base>: every URL below starts with it.
const BASE = document.body.dataset.base || "";

// ---- small DOM helpers ---------------------------------------------------------------------

/** An element with attributes (values set as-is, so data is never parsed as HTML) and children. */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "text") node.textContent = String(value);
    else if (name === "class") node.className = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function $(id) {
  return document.getElementById(id);
}

function showError(node, message) {
  node.textContent = message || "";
  node.hidden = !message;
}

function formatTime(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return date.toLocaleTimeString([], { hour12: false }) + "." +
    String(date.getMilliseconds()).padStart(3, "0");
}

function formatWhen(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  const seconds = Math.round((Date.now() - date.getTime()) / 1000);
  if (seconds < 5) return "just now";
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  return date.toLocaleString();
}

function pretty(value) {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

/** fetch + JSON; a non-2xx answer throws an Error carrying the API's {"error"} message. */
async function api(path, options = {}) {
  const init = { headers: { Accept: "application/json" }, ...options };
  if (options.body !== undefined) {
    init.headers = { ...init.headers, "Content-Type": "application/json" };
    init.body = JSON.stringify(options.body);
  }
  const response = await fetch(BASE + path, init);
  let payload = null;
  try {
    payload = await response.json();
  } catch {
    payload = null;
  }
  if (!response.ok) {
    const detail = payload && payload.error ? payload.error : response.statusText;
    const error = new Error(`${detail} (HTTP ${response.status})`);
    error.status = response.status;
    throw error;
  }
  return payload;
}

function statusBadge(status) {
  return el("span", { class: "badge", "data-status": status, text: status });
}

// ---- the runs list ---------------------------------------------------------------------------

const RUNS_REFRESH_MS = 2000;

async function refreshRuns() {
  const body = document.querySelector("#runs tbody");
  try {
    const { runs, errors } = await api("/api/runs");
    body.replaceChildren(...runs.map(runRow));
    $("runs-empty").hidden = runs.length > 0;
    $("runs-updated").textContent = `updated ${new Date().toLocaleTimeString([], { hour12: false })}`;
    // A source that could not be read (Redis down, a corrupt checkpoint) is named; others still list.
    showError($("runs-error"), (errors || []).join("\n"));
  } catch (error) {
    showError($("runs-error"), `Cannot list runs: ${error.message}`);
  }
}

function runRow(run) {
  const href = `${BASE}/runs/${encodeURIComponent(run.run_id)}`;
  return el("tr", { "data-run-id": run.run_id, "data-status": run.status },
    el("td", {}, el("a", { href, class: "mono", text: run.run_id })),
    el("td", { text: run.workflow_name || run.workflow_id || "" }),
    el("td", {}, statusBadge(run.status)),
    el("td", { class: "num", text: run.superstep_count }),
    el("td", { class: "num", text: run.pending_request_count || "" }),
    el("td", {}, el("span", { class: "source", text: run.source })),
    el("td", { class: "muted", title: run.updated_at, text: formatWhen(run.updated_at) }),
  );
}

async function setUpStartForm() {
  let workflows = [];
  try {
    ({ workflows } = await api("/api/workflows"));
  } catch {
    return; // a viewer without workflows (or an older server): no form
  }
  if (!workflows.length) return;
  const select = $("start-workflow");
  select.replaceChildren(...workflows.map((w) => el("option", { value: w.name, text: w.name })));
  $("start-card").hidden = false;
  $("start-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const errorNode = $("start-error");
    let message;
    try {
      message = JSON.parse($("start-message").value);
    } catch (error) {
      showError(errorNode, `The message is not valid JSON: ${error.message}`);
      return;
    }
    try {
      const { run_id: runId } = await api("/api/runs", {
        method: "POST", body: { workflow: select.value, message },
      });
      window.location.href = `${BASE}/runs/${encodeURIComponent(runId)}`;
    } catch (error) {
      showError(errorNode, error.message);
    }
  });
}

function startIndexPage() {
  setUpStartForm();
  refreshRuns();
  setInterval(refreshRuns, RUNS_REFRESH_MS);
}

// ---- one run -----------------------------------------------------------------------------------

const state = {
  runId: "",
  view: null,
  selected: 0, // the superstep shown by the graph, the executor list and the event highlight
  mermaidSource: null, // the graph text last rendered (re-rendered only when it changes)
  graphNodes: new Map(), // executor id -> its <g> in the rendered SVG
  renderCount: 0,
  eventsShownFor: -1, // the superstep the event list was last scrolled for
  stream: null,
  retryMs: 1000,
  ended: false,
};

function runIdFromPath() {
  const parts = window.location.pathname.split("/").filter(Boolean);
  return decodeURIComponent(parts[parts.length - 1] || "");
}

function superstepTotal(view) {
  let total = view.superstep_count || 0;
  for (const step of view.supersteps) total = Math.max(total, step.superstep + 1);
  return total;
}

/**
 * Each executor's status as of superstep `upTo`: its status in the latest superstep <= upTo in
 * which it ran, "pending" if it has not run yet. So scrubbing back replays the run, and at the
 * latest superstep every executor that ran shows how it ended.
 */
function statusesAt(view, upTo) {
  const statuses = new Map(view.executor_ids.map((id) => [id, "pending"]));
  const steps = [...view.supersteps].sort((a, b) => a.superstep - b.superstep);
  for (const step of steps) {
    if (step.superstep > upTo) break;
    for (const [id, status] of Object.entries(step.executors)) statuses.set(id, status);
  }
  return statuses;
}

function executorsIn(view, superstep) {
  const step = view.supersteps.find((s) => s.superstep === superstep);
  return new Set(step ? Object.keys(step.executors) : []);
}

function setLive(stateName, text) {
  const node = $("live");
  node.dataset.state = stateName;
  node.textContent = text || stateName;
}

function renderRun(view) {
  state.view = view;
  const total = superstepTotal(view);
  const follow = $("follow").checked;
  if (follow || state.selected > total - 1) state.selected = Math.max(0, total - 1);

  document.title = `${view.workflow_name || view.workflow_id} · ${view.run_id}`;
  const title = $("run-title");
  title.replaceChildren(
    el("span", { text: view.workflow_name || view.workflow_id || "run" }),
    el("small", { class: "mono", text: view.run_id }),
  );
  const status = $("run-status");
  status.dataset.status = view.status;
  status.textContent = view.status;
  $("run-meta").textContent =
    `${total} superstep${total === 1 ? "" : "s"} · ${view.events.length} events · source ${view.source}`;
  showError($("run-error"), view.error ? `Error: ${view.error}` : "");

  renderTimeline(total);
  renderExecutors();
  renderGraph();
  renderEvents();
  renderOutputs(view.outputs);
  renderRequests(view);
}

function renderTimeline(total) {
  const slider = $("timeline");
  slider.min = "0";
  slider.max = String(Math.max(0, total - 1));
  slider.value = String(state.selected);
  slider.disabled = total <= 1;
  const ran = [...executorsIn(state.view, state.selected)];
  $("timeline-label").textContent = total
    ? `Superstep ${state.selected} / ${total - 1}` + (ran.length ? ` · ${ran.join(", ")}` : "")
    : "No superstep yet";
}

function renderExecutors() {
  const view = state.view;
  const statuses = statusesAt(view, state.selected);
  const active = executorsIn(view, state.selected);
  const asking = askingExecutors(view);
  const list = $("executors");
  list.replaceChildren(...[...statuses].map(([id, status]) => {
    const classes = [active.has(id) ? "active" : "", asking.has(id) ? "asking" : ""].join(" ").trim();
    return el("li", { "data-executor": id, "data-status": status, class: classes || null },
      el("span", { class: `dot st-${status}` }),
      el("span", { class: "mono name", text: id }),
      asking.has(id) ? el("span", { class: "asking-tag", text: "waiting for you" }) : null,
      el("span", { class: "muted status", text: status }),
    );
  }));
  paintGraph(statuses, active);
}

/** The executors with a pending request (they wait for a human's answer). */
function askingExecutors(view) {
  return new Set(view.pending_requests.map((r) => r.source_executor_id));
}

async function renderGraph() {
  const view = state.view;
  const graph = $("graph");
  if (!view.mermaid) {
    if (state.mermaidSource !== "") {
      state.mermaidSource = "";
      state.graphNodes = new Map();
      graph.replaceChildren(el("p", { class: "muted", text: "The graph of this run is unknown to the viewer." }));
    }
    return;
  }
  if (view.mermaid === state.mermaidSource) return;
  state.mermaidSource = view.mermaid;
  if (typeof window.mermaid === "undefined") {
    graph.replaceChildren(el("p", { class: "error", text: "Mermaid did not load." }));
    return;
  }
  const svgId = `run-graph-${++state.renderCount}`;
  try {
    const { svg } = await window.mermaid.render(svgId, view.mermaid);
    if (state.mermaidSource !== view.mermaid) return; // a newer graph arrived meanwhile
    // Mermaid (securityLevel "strict") sanitizes its output; we parse it as an inert document
    // and move the <svg> node over rather than assigning markup to the page.
    const parsed = new DOMParser().parseFromString(svg, "text/html");
    const svgNode = parsed.querySelector("svg");
    if (!svgNode) throw new Error("no <svg> in Mermaid's output");
    graph.replaceChildren(document.adoptNode(svgNode));
    state.graphNodes = findGraphNodes(svgNode, svgId, state.view.node_ids);
    const statuses = statusesAt(state.view, state.selected);
    paintGraph(statuses, executorsIn(state.view, state.selected));
  } catch (error) {
    graph.replaceChildren(el("p", { class: "error", text: `Cannot draw the graph: ${error.message}` }));
  }
}

/** executor id -> its node <g>: Mermaid 11 names them "<svgId>-flowchart-<nodeId>-<n>". */
function findGraphNodes(svgNode, svgId, nodeIds) {
  const nodes = new Map();
  const groups = [...svgNode.querySelectorAll("g.node")];
  for (const [executorId, nodeId] of Object.entries(nodeIds || {})) {
    const prefix = `${svgId}-flowchart-${nodeId}-`;
    const group = groups.find((g) => g.dataset.id === nodeId ||
      (g.id.startsWith(prefix) && /^\d+$/.test(g.id.slice(prefix.length))));
    if (group) {
      group.setAttribute("data-executor", executorId);
      nodes.set(executorId, group);
    }
  }
  return nodes;
}

function paintGraph(statuses, active) {
  const asking = state.view ? askingExecutors(state.view) : new Set();
  for (const [executorId, group] of state.graphNodes) {
    group.classList.toggle("asking", asking.has(executorId));
    const status = statuses.get(executorId) || "pending";
    for (const name of STATUSES) group.classList.remove(`st-${name}`);
    group.classList.add(`st-${status}`);
    group.classList.toggle("active", active.has(executorId));
    group.setAttribute("data-status", status);
  }
}

function renderEvents() {
  const list = $("events");
  const nearBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  list.replaceChildren(...state.view.events.map((event) => {
    const current = event.superstep === state.selected;
    return el("li", {
      "data-seq": event.seq,
      "data-superstep": event.superstep === null || event.superstep === undefined ? "" : event.superstep,
      "data-type": event.type,
      class: current ? "current" : "",
    },
    el("span", { class: "time mono", text: formatTime(event.time) }),
    el("span", { class: "step mono", text: event.superstep === null || event.superstep === undefined ? "" : `#${event.superstep}` }),
    el("span", { class: "type", text: event.type.replace(/Event$/, "") }),
    el("span", { class: "summary", text: event.summary }),
    );
  }));
  if ($("follow").checked) {
    list.scrollTop = list.scrollHeight;
  } else if (state.eventsShownFor !== state.selected) {
    // Scrubbed to another superstep: bring its first event into view.
    const first = list.querySelector("li.current");
    if (first) list.scrollTop = first.offsetTop - list.offsetTop;
  } else if (nearBottom) {
    list.scrollTop = list.scrollHeight;
  }
  state.eventsShownFor = state.selected;
}

function renderOutputs(outputs) {
  const box = $("outputs");
  if (!outputs.length) {
    box.replaceChildren(el("p", { class: "muted empty", text: "None yet." }));
    return;
  }
  box.replaceChildren(...outputs.map((output) => el("div", { class: "output-item" },
    el("div", { class: "muted small", text: `from ${output.source_executor_id}` }),
    el("pre", { class: "output", text: output.text }),
  )));
}

// ---- human-in-the-loop requests ----------------------------------------------------------------

/** Keeps a form per pending request; existing forms stay (with what the user typed). */
function renderRequests(view) {
  const box = $("requests");
  const wanted = new Map(view.pending_requests.map((r) => [r.request_id, r]));
  for (const form of box.querySelectorAll("form.request")) {
    if (!wanted.has(form.dataset.requestId)) form.remove();
  }
  const present = new Set([...box.querySelectorAll("form.request")].map((f) => f.dataset.requestId));
  for (const request of view.pending_requests) {
    if (!present.has(request.request_id)) box.append(requestForm(request, view.can_answer));
  }
  const hasForms = box.querySelector("form.request") !== null;
  const empty = box.querySelector(":scope > p.empty");
  if (hasForms && empty) empty.remove();
  if (!hasForms && !empty) box.append(el("p", { class: "muted empty", text: "None." }));
}

function schemaKind(schema) {
  const type = schema && schema.type;
  // agentic_core.ToolApprovalResponse: approve, reject with a reason, or edit the arguments.
  if (schema && schema.title === "ToolApprovalResponse" && schema.properties && schema.properties.approved) {
    return "tool_approval";
  }
  if (type === "boolean" || type === "string" || type === "number" || type === "integer") return type;
  return "json";
}

function requestForm(request, canAnswer) {
  const schema = request.response_schema || {};
  const kind = schemaKind(schema);
  const form = el("form", { class: "request", "data-request-id": request.request_id, "data-kind": kind },
    el("div", { class: "muted small", text: `${request.source_executor_id} asks` }),
    el("pre", { class: "prompt", text: kind === "tool_approval" ? toolCallText(request.data) : request.prompt }),
  );
  const controls = el("div", { class: "controls" });
  if (kind === "tool_approval") {
    toolApprovalControls(controls, request.data);
  } else if (kind === "boolean") {
    controls.append(
      el("button", { type: "submit", name: "answer", value: "true", class: "approve", text: "Approve" }),
      el("button", { type: "submit", name: "answer", value: "false", class: "reject", text: "Reject" }),
    );
  } else if (kind === "string") {
    controls.append(el("input", { name: "answer", type: "text", required: true, placeholder: schema.title || "answer" }),
      el("button", { type: "submit", text: "Send" }));
  } else if (kind === "number" || kind === "integer") {
    controls.append(el("input", { name: "answer", type: "number", required: true, step: kind === "integer" ? "1" : "any" }),
      el("button", { type: "submit", text: "Send" }));
  } else {
    controls.append(
      el("textarea", { name: "answer", rows: 4, spellcheck: "false", placeholder: "a JSON value", required: true }),
      el("details", { class: "schema" }, el("summary", { text: "expected schema" }),
        el("pre", { text: pretty(schema) })),
      el("button", { type: "submit", text: "Send" }),
    );
  }
  form.append(controls, el("p", { class: "error", hidden: true }));
  if (!canAnswer) {
    for (const control of form.querySelectorAll("button, input, textarea")) control.disabled = true;
    form.append(el("p", { class: "muted small", text: "This viewer cannot resume this run (no workflow or store)." }));
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submitAnswer(form, kind, event.submitter);
  });
  return form;
}

/** A tool call waiting for approval: Approve; Reject with a reason the model reads; or approve
 * with edited arguments (prefilled with the model's). */
function toolApprovalControls(controls, data) {
  const args = data && typeof data === "object" && data.arguments && typeof data.arguments === "object"
    ? data.arguments : {};  // a request too large to show comes truncated: edit from {}
  const reason = el("input", { name: "reason", type: "text", placeholder: "reason (the model reads it)" });
  const reject = el("button", { type: "submit", name: "decision", value: "reject", class: "reject", text: "Reject" });
  // Enter in the reason rejects (a form's Enter would press its first button: Approve).
  reason.addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    event.preventDefault();
    reason.form.requestSubmit(reject);
  });
  controls.append(
    el("button", { type: "submit", name: "decision", value: "approve", class: "approve", text: "Approve" }),
    reason,
    reject,
    el("details", { class: "schema" }, el("summary", { text: "edit the arguments" }),
      el("textarea", { name: "arguments", rows: 4, spellcheck: "false", text: pretty(args) }),
      el("button", { type: "submit", name: "decision", value: "edit", text: "Approve with these arguments" })),
  );
}

/** "deploy({...})": the call a person approves, arguments shown whole (the prompt names only). */
function toolCallText(data) {
  if (!data || typeof data !== "object" || typeof data.tool_name !== "string") return pretty(data);
  const who = data.agent_name ? `${data.agent_name} wants to call ` : "";
  return `${who}${data.tool_name}(${pretty(data.arguments || {})})`;
}

function readToolApproval(form, submitter) {
  const decision = submitter ? submitter.value : "approve";
  if (decision === "reject") {
    const reason = form.elements.namedItem("reason").value.trim();
    return reason ? { approved: false, reason } : { approved: false };
  }
  if (decision !== "edit") return { approved: true };
  let args;
  try {
    args = JSON.parse(form.elements.namedItem("arguments").value);
  } catch (error) {
    throw new Error(`Arguments are not valid JSON: ${error.message}`);
  }
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    throw new Error("Arguments must be a JSON object.");
  }
  return { approved: true, arguments: args };
}

function readAnswer(form, kind, submitter) {
  if (kind === "tool_approval") return readToolApproval(form, submitter);
  if (kind === "boolean") return submitter && submitter.value === "true";
  const raw = form.elements.namedItem("answer").value;
  if (kind === "string") return raw;
  if (kind === "number" || kind === "integer") {
    const value = Number(raw);
    if (raw.trim() === "" || Number.isNaN(value)) throw new Error("Enter a number.");
    return value;
  }
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw new Error(`Not valid JSON: ${error.message}`);
  }
}

async function submitAnswer(form, kind, submitter) {
  const errorNode = form.querySelector("p.error");
  let value;
  try {
    value = readAnswer(form, kind, submitter);
  } catch (error) {
    showError(errorNode, error.message);
    return;
  }
  const controls = [...form.querySelectorAll("button, input, textarea")];
  controls.forEach((c) => { c.disabled = true; });
  showError(errorNode, "");
  form.classList.add("sending");
  try {
    await api(`/api/runs/${encodeURIComponent(state.runId)}/responses`, {
      method: "POST", body: { responses: { [form.dataset.requestId]: value } },
    });
    form.classList.add("sent");
    form.append(el("p", { class: "muted small", text: "Answer sent; the run resumes." }));
    if (state.ended) connectStream(); // a finished stream does not bring the resumed run
  } catch (error) {
    showError(errorNode, error.message);
    controls.forEach((c) => { c.disabled = false; });
  } finally {
    form.classList.remove("sending");
  }
}

// ---- live updates --------------------------------------------------------------------------

const MAX_RETRY_MS = 15000;

function connectStream() {
  if (state.stream) state.stream.close();
  state.ended = false;
  setLive("connecting", "connecting");
  const source = new EventSource(`${BASE}/api/runs/${encodeURIComponent(state.runId)}/stream`);
  state.stream = source;
  source.addEventListener("open", () => {
    state.retryMs = 1000;
    setLive("live", "live");
  });
  source.addEventListener("run", (event) => {
    setLive("live", "live");
    try {
      renderRun(JSON.parse(event.data));
    } catch (error) {
      showError($("run-error"), `Bad update from the server: ${error.message}`);
    }
  });
  // The server closes the stream after the final snapshot of a finished run; anything else is a
  // dropped connection: reconnect with backoff (the browser's own retry would not back off).
  source.addEventListener("error", () => {
    source.close();
    if (state.stream !== source) return;
    state.stream = null;
    if (state.view && FINISHED.has(state.view.status)) {
      state.ended = true;
      setLive("ended", "ended");
      return;
    }
    setLive("reconnecting", `reconnecting in ${Math.round(state.retryMs / 1000)} s`);
    const delay = state.retryMs;
    state.retryMs = Math.min(state.retryMs * 2, MAX_RETRY_MS);
    setTimeout(reconnect, delay);
  });
}

async function reconnect() {
  try {
    renderRun(await api(`/api/runs/${encodeURIComponent(state.runId)}`));
  } catch (error) {
    if (error.status === 404) {
      showError($("run-error"), `No run ${state.runId} here.`);
      setLive("ended", "not found");
      return;
    }
  }
  connectStream();
}

async function startRunPage() {
  state.runId = runIdFromPath();
  if (window.mermaid) {
    window.mermaid.initialize({
      startOnLoad: false,
      securityLevel: "strict",
      theme: "base",
      themeVariables: {
        fontFamily: "ui-sans-serif, system-ui, sans-serif",
        primaryColor: "#f3f4f6", primaryBorderColor: "#9ca3af", primaryTextColor: "#111827",
        lineColor: "#9ca3af",
      },
      flowchart: { curve: "basis", padding: 10, rankSpacing: 34, nodeSpacing: 40 },
    });
  }
  const slider = $("timeline");
  slider.addEventListener("input", () => {
    $("follow").checked = false; // the user scrubs: stop jumping to the latest superstep
    state.selected = Number(slider.value);
    if (state.view) renderRun(state.view);
  });
  $("follow").addEventListener("change", () => {
    if (state.view) renderRun(state.view);
  });
  try {
    renderRun(await api(`/api/runs/${encodeURIComponent(state.runId)}`));
  } catch (error) {
    showError($("run-error"), error.status === 404 ? `No run ${state.runId} here.` : error.message);
    if (error.status === 404) {
      setLive("ended", "not found");
      return;
    }
  }
  connectStream();
}

document.addEventListener("DOMContentLoaded", () => {
  if (document.body.dataset.page === "run") startRunPage();
  else startIndexPage();
});
