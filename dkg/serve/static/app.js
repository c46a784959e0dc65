"use strict";
// The clinician page: plain DOM, text set with textContent only (never innerHTML from answers).
const $ = (id) => document.getElementById(id);
let attributes = {};

function headers() {
  const h = { "content-type": "application/json" };
  const key = sessionStorage.getItem("dkg-key");
  if (key) h["x-api-key"] = key;
  return h;
}

async function call(path, body) {
  const opts = body === undefined ? { headers: headers() } : { method: "POST", headers: headers(), body: JSON.stringify(body) };
  const r = await fetch(path, opts);
  if (r.status === 401) { $("key-box").hidden = false; }
  if (r.status === 422 && path === "/v1/ask") {  // a rejected question: the answer JSON says why
    const j = await r.clone().json().catch(() => ({}));
    if (j.status) return r;
  }
  if (!r.ok) {
    let detail = r.statusText;
    try { const j = await r.json(); detail = typeof j.detail === "string" ? j.detail : JSON.stringify(j.detail); } catch (e) { /* not JSON */ }
    throw new Error(`${r.status}: ${detail}`);
  }
  return r;
}

function showError(msg) { $("error").textContent = msg; $("error").hidden = !msg; }

function li(text, cls) { const e = document.createElement("li"); e.textContent = text; if (cls) e.className = cls; return e; }

function factField(name, label) {
  const spec = attributes[name] || { type: "text", values: [] };
  const wrap = document.createElement("div");
  wrap.className = "field";
  const caption = document.createElement("label");
  caption.htmlFor = `fact-${name}`;
  caption.textContent = (label || name.replace(/_/g, " ")) + (spec.unit ? ` (${spec.unit})` : "");
  let input;
  if (spec.type === "category" && spec.values.length) {
    input = document.createElement("select");
    input.appendChild(new Option("— choose —", ""));
    for (const v of spec.values) input.appendChild(new Option(v.replace(/_/g, " "), v));
  } else {
    input = document.createElement("input");
    input.type = spec.type === "number" ? "number" : "text";
    if (spec.type === "number") { input.step = "any"; if (spec.min != null) input.min = spec.min; if (spec.max != null) input.max = spec.max; }
  }
  input.id = `fact-${name}`;
  input.name = name;
  input.dataset.type = spec.type;
  input.required = true;
  wrap.append(caption, input);
  return wrap;
}

function givenFacts() {
  const facts = {};
  for (const el of $("facts-inputs").querySelectorAll("input, select")) {
    if (el.value === "") continue;
    facts[el.name] = el.dataset.type === "number" ? Number(el.value) : el.value;
  }
  return facts;
}

async function drawPath(answer) {
  const ev = answer.evidence[0];
  const fig = $("path");
  if (!ev) { fig.hidden = true; return; }
  const q = encodeURIComponent(JSON.stringify(answer.facts || {}));
  const r = await call(`/v1/guidelines/${encodeURIComponent(ev.guideline)}/${encodeURIComponent(ev.version)}/graph.svg?facts=${q}`);
  const svg = new DOMParser().parseFromString(await r.text(), "image/svg+xml").documentElement;
  const box = $("path-svg");
  box.replaceChildren(document.importNode(svg, true));
  fig.hidden = false;
  const first = box.querySelector("[id^='onpath_']");
  if (first && first.scrollIntoView) first.scrollIntoView({ block: "nearest", inline: "center" });
}

async function ask(ev) {
  ev.preventDefault();
  showError("");
  $("ask-button").disabled = true;
  try {
    const r = await call("/v1/ask", { question: $("question").value, facts: givenFacts() });
    const a = await r.json();
    $("answer").hidden = false;
    $("answer-status").textContent = a.status.replace(/_/g, " ");
    $("answer-status").className = `status ${a.status}`;
    $("answer-text").textContent = a.answer;
    $("evidence").replaceChildren(...a.evidence.map((e) => li(`${e.role === "on the way" ? "on the way: " : e.role === "treatment" ? "treatment asked about: " : ""}${e.guideline} ${e.version}, page ${e.page}, box ${e.box}: ${e.text}`, "cite")));
    $("facts-read").replaceChildren(...(a.facts_read || []).map((f) => li(`${f.attr} = ${f.value} — “${f.text}” (${f.rule})`)));
    const fields = $("facts-inputs");
    if (a.status === "needs_more_info" && (a.missing || []).length) {
      // each missing fact by its attribute name (the facts' key) with its label ("mrd": "MRD status")
      const have = givenFacts();
      for (const m of a.missing) if (!attributes[m.attr]) attributes[m.attr] = { name: m.attr, type: m.type, values: m.values, unit: m.unit };
      fields.replaceChildren(...a.missing.map((m) => factField(m.attr, m.label)));
      for (const [k, v] of Object.entries(have)) { const el = $(`fact-${k}`); if (el) el.value = v; }
      $("facts-fields").hidden = fields.children.length === 0;
    } else if (a.status === "answered") {
      $("facts-fields").hidden = true;
    }
    if (a.status === "answered") await drawPath(a); else $("path").hidden = true;
  } catch (e) {
    showError(e.message);
  } finally {
    $("ask-button").disabled = false;
  }
}

async function webAsk(ev) {
  ev.preventDefault();
  showError("");
  $("web-button").disabled = true;
  try {
    const r = await call("/v1/web/ask", { question: $("web-question").value });
    const a = await r.json();
    const answered = a.status === "answered";
    $("web-answer").hidden = false;
    $("web-status").textContent = answered ? "answered" : "refused";
    $("web-status").className = `status ${answered ? "answered" : "refused"}`;
    $("web-text").textContent = a.answer;
    $("web-text").className = answered ? "" : "refusal";
    // a refusal stands alone: the pages that were looked at did not hold the answer
    $("references").replaceChildren(...(answered ? a.references : []).map((ref) => {
      const item = document.createElement("li");
      const link = document.createElement("a");
      link.href = ref.url; link.textContent = ref.title || ref.url; link.rel = "noopener"; link.target = "_blank";
      const where = ref.section ? ` — ${ref.section}` : "";
      item.append(link, document.createTextNode(`${where} (${ref.score.toFixed(2)})`));
      return item;
    }));
  } catch (e) {
    showError(e.message);
  } finally {
    $("web-button").disabled = false;
  }
}

function tabs() {
  for (const b of document.querySelectorAll("nav button")) {
    b.addEventListener("click", () => {
      for (const o of document.querySelectorAll("nav button")) {
        o.setAttribute("aria-selected", String(o === b));
        $(o.dataset.panel).hidden = o !== b;
      }
    });
  }
}

function start() {
  tabs();
  $("ask-form").addEventListener("submit", ask);
  $("web-form").addEventListener("submit", webAsk);
  $("question").addEventListener("input", () => { $("facts-fields").hidden = true; $("facts-inputs").replaceChildren(); });
  $("api-key").addEventListener("change", (e) => { sessionStorage.setItem("dkg-key", e.target.value); loadMeta(); });
  loadMeta();
}

async function loadMeta() {
  try {
    attributes = Object.fromEntries((await (await call("/v1/attributes")).json()).map((a) => [a.name, a]));
    const gs = await (await call("/v1/guidelines")).json();
    $("footer").textContent = gs.length
      ? "Guidelines loaded: " + gs.map((g) => `${g.code} ${g.current}${g.name ? " (" + g.name + ")" : ""}`).join(" · ")
      : "No guideline loaded.";
  } catch (e) {
    $("footer").textContent = `Guideline versions unavailable (${e.message})`;
  }
}

start();
