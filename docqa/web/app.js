// docqa's web page: plain JavaScript against the REST API, no build step.
// Document and answer text is untrusted: it reaches the page only as textContent (markdown.js builds
// answers node by node), never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
let apiKey = localStorage.getItem("docqa-api-key") || "";
let running = null;  // the answer being streamed: { controller, turn }

function headers(extra = {}) {
  return apiKey ? { ...extra, Authorization: `Bearer ${apiKey}` } : extra;
}

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

async function api(path, options = {}) {
  const response = await fetch(path, { ...options, headers: headers(options.headers || {}) });
  if (response.status === 401) {
    askForKey();
    throw new Error("an API key is needed");
  }
  if (!response.ok) {
    let message = `${response.status}`;
    try { message = (await response.json()).error.message; } catch (_) { /* not JSON */ }
    throw new Error(message);
  }
  return response;
}

function askForKey() {
  const key = prompt("API key (Authorization: Bearer ...)", apiKey);
  if (key !== null) {
    apiKey = key.trim();
    localStorage.setItem("docqa-api-key", apiKey);
  }
}

function count(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function collection() {
  return $("collection").value || "default";
}

// --- collections and documents -------------------------------------------------------------

async function loadCollections(select) {
  const data = await (await api("/v1/collections")).json();
  // the collection chosen last, kept across reloads (it reset to "default")
  const chosen = select || localStorage.getItem("docqa-collection") || collection();
  const names = data.collections.map((c) => c.name);
  if (!names.length) names.push("default");
  $("collection").replaceChildren(...names.map((n) => {
    const option = el("option", n);
    option.value = n;
    option.selected = n === chosen;
    return option;
  }));
  await switchCollection();
}

async function createCollection(event) {
  event.preventDefault();
  const name = $("new-collection-name").value.trim();
  if (!name) return;
  try {
    await api("/v1/collections", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ name }),
    });
    $("new-collection-name").value = "";
    await loadCollections(name);
  } catch (err) {
    setNotice(`could not create ${name}: ${err.message}`);
  }
}

async function deleteCollection() {
  const name = collection();
  const listed = (await (await api("/v1/collections")).json()).collections.find((c) => c.name === name);
  const held = listed ? count(listed.documents, "document") : "its documents";
  if (!confirm(`Delete collection ${name} with ${held} and its conversations? This cannot be undone.`)) return;
  try {
    const done = await (await api(`/v1/collections/${encodeURIComponent(name)}`, { method: "DELETE" })).json();
    localStorage.removeItem("docqa-collection");
    localStorage.removeItem(rememberedKey());
    setNotice(`deleted collection ${name} (${count(done.documents_deleted, "document")})`);
  } catch (err) {
    setNotice(`could not delete ${name}: ${err.message}`);
    return;
  }
  const others = (await (await api("/v1/collections")).json()).collections.map((c) => c.name);
  await loadCollections(others[0] || "default");
}

async function switchCollection() {
  localStorage.setItem("docqa-collection", collection());
  const remembered = localStorage.getItem(rememberedKey());
  await openConversation(remembered ? Number(remembered) : null);
  await loadDocuments();
}

function setNotice(text) {
  $("notice").textContent = text;
}

async function loadDocuments() {
  const list = $("documents");
  try {
    const data = await (await api(`/v1/collections/${encodeURIComponent(collection())}/documents`)).json();
    const jobs = data.jobs || []; // with a shared database: files still queued or being ingested by workers
    if (!data.documents.length && !jobs.length) {
      list.replaceChildren(el("li", "no documents yet: drop files above"));
      return;
    }
    list.replaceChildren(...data.documents.map(documentItem), ...jobs.map(jobItem));
    fillDocumentChoice(data.documents.filter((d) => d.status === "ready"));
  } catch (err) {
    list.replaceChildren(el("li", `no documents yet (${err.message})`));
  }
}

function fillDocumentChoice(documents) {
  const select = $("set-document");
  const chosen = select.value;
  const all = el("option", "All documents");
  all.value = "";
  select.replaceChildren(all, ...documents.map((d) => {
    const option = el("option", d.name);
    option.value = String(d.id);
    return option;
  }));
  select.value = documents.some((d) => String(d.id) === chosen) ? chosen : "";
}

// What the catalog says a document is, in a few words: "10-K, fiscal 2022, 3M COMPANY (MMM)".
function catalogLine(c) {
  const parts = [c.form, c.fiscal_year && `fiscal ${c.fiscal_year}`, c.quarter && `Q${c.quarter}`];
  const who = c.company || c.title;
  if (who) parts.push(c.tickers && c.tickers.length ? `${who} (${c.tickers.join(", ")})` : who);
  if (c.tags && c.tags.length) parts.push(`tags: ${[].concat(c.tags).join(", ")}`);
  return parts.filter(Boolean).join(", ");
}

function documentItem(d) {
  const ready = d.status === "ready";
  const item = el("li", undefined, ready ? "" : "failed");
  const what = ready ? `${count(d.pages, "page")}, ${count(d.chunks, "chunk")}` : `${d.status}: ${d.error || ""}`;
  const meta = catalogLine(d.catalog || {});
  const name = el("span", `${d.name} · ${what}${meta ? ` · ${meta}` : ""}`, "doc-name");
  name.title = [d.origin && `from ${d.origin}`, ...(d.warnings || [])].filter(Boolean).join("\n");
  item.append(name);
  const remove = el("button", "Delete", "delete");
  remove.type = "button";
  remove.title = `Delete ${d.name} (document ${d.id})`;
  remove.onclick = async () => {
    if (!confirm(`Delete ${d.name} and its index entries?`)) return;
    try {
      await api(`/v1/collections/${encodeURIComponent(collection())}/documents/${d.id}`, { method: "DELETE" });
      setNotice(`deleted ${d.name}`);
    } catch (err) {
      setNotice(`could not delete ${d.name}: ${err.message}`);
    }
    await loadDocuments();
  };
  item.append(remove);
  return item;
}

function jobProgress(job) {
  const p = job.progress || {};
  return p.total ? `${job.status} ${p.done}/${p.total} ${p.unit}` : job.status;
}

function jobItem(job) {
  const item = el("li", undefined, "pending");
  item.append(el("span", `${job.name} · ${jobProgress(job)}`, "doc-name"));
  return item;
}

async function followJob(job, label, encrypted) {
  // A queued upload (202): a worker ingests it; its status URL says how far it got.
  for (;;) {
    let now;
    try {
      now = await (await api(job.status_url)).json();
    } catch (err) {
      label.textContent = `${job.name}: ${err.message}`;
      label.className = "failed";
      return;
    }
    if (now.status === "ready" || now.status === "failed") {
      label.textContent = now.status === "ready" ? `${job.name}: ready` : `${job.name}: failed: ${now.error}`;
      label.className = now.status === "ready" ? "ok" : "failed";
      if (now.status === "failed" && /encrypted/.test(now.error || "")) encrypted();
      loadDocuments();
      return;
    }
    label.textContent = `${job.name}: ${jobProgress(now)}`;
    await new Promise((done) => setTimeout(done, 1000));
  }
}

function uploadFile(file, password, item) {
  // One request per file, so each file has its own progress bar and its own verdict. An encrypted PDF's
  // password goes with its request only (the server never stores it), asked for in the file's own line.
  item = item || el("li");
  const label = el("div", file.name);
  const bar = el("progress");
  bar.max = 100;
  bar.value = 0;
  item.replaceChildren(label, bar);
  if (!item.parentNode) $("uploads").prepend(item);
  const form = new FormData();
  form.append("files", file, file.name);
  if (password) form.append("password", password);
  const xhr = new XMLHttpRequest();
  xhr.open("POST", `/v1/collections/${encodeURIComponent(collection())}/documents`);
  if (apiKey) xhr.setRequestHeader("Authorization", `Bearer ${apiKey}`);
  xhr.upload.onprogress = (e) => { if (e.lengthComputable) bar.value = (100 * e.loaded) / e.total; };
  xhr.upload.onload = () => { bar.removeAttribute("value"); label.textContent = `${file.name}: indexing…`; };
  xhr.onload = () => {
    bar.remove();
    let body = {};
    try { body = JSON.parse(xhr.responseText); } catch (_) { /* keep empty */ }
    const f = body.files && body.files[0];
    const job = xhr.status === 202 && body.jobs && body.jobs[0];
    if (job) {
      label.textContent = `${file.name}: queued`;
      followJob(job, label, () => askPassword(file, item));
      loadDocuments();
      return;
    }
    if (xhr.status === 202 && body.failed && body.failed[0]) {
      label.textContent = `${file.name}: failed: ${body.failed[0].error}`;
      label.className = "failed";
    } else if (xhr.status !== 200 || !f) {
      label.textContent = `${file.name}: failed: ${(body.error && body.error.message) || xhr.status}`;
      label.className = "failed";
    } else if (f.status === "failed") {
      label.textContent = `${file.name}: failed: ${f.error}`;
      label.className = "failed";
      if (/encrypted/.test(f.error || "")) askPassword(file, item);
    } else {
      label.textContent = `${file.name}: ${f.status}, ${count(f.pages, "page")}, ${count(f.chunks, "chunk")}`;
      label.className = "ok";
    }
    loadDocuments();
  };
  xhr.onerror = () => { label.textContent = `${file.name}: failed: network error`; label.className = "failed"; };
  xhr.send(form);
}

function askPassword(file, item) {
  // An encrypted PDF: its password typed in its line, the file sent again with it.
  const form = el("form", undefined, "password");
  const input = el("input");
  input.type = "password";
  input.autocomplete = "off";
  input.placeholder = "PDF password";
  input.setAttribute("aria-label", `Password for ${file.name}`);
  const open = el("button", "Open");
  open.type = "submit";
  form.append(input, open);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (input.value) uploadFile(file, input.value, item);
  });
  item.append(form);
  input.focus();
}

// --- the documents' panel: open beside the thread on a desktop (closed if the user closed it), behind the
// header's button on a phone ----------------------------------------------------------------------

function phone() {
  return window.matchMedia("(max-width: 800px)").matches;
}

function showDocuments(open) {
  document.body.classList.toggle("documents-open", open);
  document.body.classList.toggle("documents-closed", !open);
  $("show-documents").setAttribute("aria-expanded", String(open));
}

function toggleDocuments() {
  const open = $("show-documents").getAttribute("aria-expanded") !== "true";
  showDocuments(open);
  if (!phone()) localStorage.setItem("docqa-documents", open ? "open" : "closed");
  if (open && phone()) $("upload").scrollIntoView({ block: "start" });
}

// --- conversations: kept on the server, per collection (and per API key) -----------------------

let current = { id: null, turns: [] };  // the open conversation: its server ID (null: not started) and turns

function conversationsPath(suffix = "") {
  return `/v1/collections/${encodeURIComponent(collection())}/conversations${suffix}`;
}

function rememberedKey() {
  return `docqa-conversation:${collection()}`;
}

function statusOf(message) {
  const t = message.timings || {};
  if (message.cached) return "answered from the cache";
  let status = `first token ${((t.ttft_ms || 0) / 1000).toFixed(1)} s · ${t.completion_tokens} tokens in ${((t.total_ms || 0) / 1000).toFixed(1)} s`;
  return status + endNote(message.finish_reason) + warnNote(message.warnings);
}

// what the server warned of (a model that cannot think asked to), kept on the answer, not only while it streams
function warnNote(warnings) {
  return warnings && warnings.length ? ` · ${warnings.join("; ")}` : "";
}

// why an answer ended, where its text cannot say it
function endNote(reason) {
  if (reason === "repetition") return " · stopped: the model repeated itself";
  if (reason === "length") return " · cut at the answer length limit (raise “Answer length” in the settings)";
  return "";
}

async function loadConversations() {
  const query = $("conversation-search").value.trim();
  let found = [];
  try {
    const path = conversationsPath(query ? `?q=${encodeURIComponent(query)}` : "");
    found = (await (await api(path)).json()).conversations;
  } catch (_) { /* a collection not created yet: no conversations */ }
  $("conversation-list").replaceChildren(...found.map((c) => {
    const item = el("li", undefined, c.id === current.id ? "current" : "");
    const open = el("button", c.title || "New conversation", "conversation-title");
    open.type = "button";
    open.title = `${count(c.messages, "question")}, ${c.updated_at.slice(0, 16).replace("T", " ")}`;
    open.onclick = () => openConversation(c.id);
    const rename = el("button", "Rename", "rename");
    rename.type = "button";
    rename.onclick = () => renameConversation(c);
    const remove = el("button", "Delete", "delete");
    remove.type = "button";
    remove.onclick = () => deleteConversation(c);
    item.append(open, rename, remove);
    return item;
  }));
}

async function openConversation(id) {
  if (running) return;
  let turns = [];
  if (id !== null) {
    try {
      const data = await (await api(conversationsPath(`/${id}`))).json();
      turns = data.messages.map((m) => ({
        id: m.id, question: m.question, answer: m.answer, reasoning: m.reasoning, citations: m.citations || [],
        feedback: m.feedback ? m.feedback.rating : null, status: statusOf(m), done: true,
      }));
    } catch (_) {
      id = null;  // deleted, or another key's: start afresh
    }
  }
  current = { id, turns };
  restoreSettings(id);
  if (id === null) localStorage.removeItem(rememberedKey()); else localStorage.setItem(rememberedKey(), String(id));
  renderThread();
  await loadConversations();
}

async function renameConversation(c) {
  const title = prompt("Conversation title", c.title);
  if (title === null) return;
  await api(conversationsPath(`/${c.id}`), {
    method: "PATCH", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ title }),
  });
  await loadConversations();
}

async function deleteConversation(c) {
  if (!confirm(`Delete the conversation "${c.title || "New conversation"}"?`)) return;
  await api(conversationsPath(`/${c.id}`), { method: "DELETE" });
  if (c.id === current.id) await openConversation(null); else await loadConversations();
}

async function rate(turn, rating, view) {
  if (!current.id || !turn.id) return;
  await api(conversationsPath(`/${current.id}/messages/${turn.id}/feedback`), {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ rating }),
  });
  turn.feedback = rating;
  view.querySelector(".thumbs-up").setAttribute("aria-pressed", String(rating === 1));
  view.querySelector(".thumbs-down").setAttribute("aria-pressed", String(rating === -1));
}

function renderThread() {
  $("thread").replaceChildren(...current.turns.map((turn, index) => turnView(turn, index)));
  $("empty-thread").hidden = current.turns.length > 0;
}

function pagesOf(c) {
  const [first, last] = c.pages;
  let where = c.page ? `p. ${c.page}` : first === last ? `p. ${first}` : `pp. ${first}-${last}`;
  if (c.section) where += `, "${c.section}"`;
  return c.ocr ? `${where}, read by OCR` : where;
}

function turnView(turn, index) {
  const view = el("article", undefined, "turn");
  view.dataset.index = index;
  view.append(el("div", turn.question, "question"));
  const reasoning = el("details", undefined, "reasoning");
  reasoning.append(el("summary", "Reasoning"), el("pre", turn.reasoning || ""));
  reasoning.hidden = !turn.reasoning;
  const answer = el("div", undefined, "answer");
  answer.setAttribute("aria-live", "polite");
  const status = el("div", turn.status || "", "status");
  if (turn.done) status.dataset.done = "1";
  const citations = el("ol", undefined, "citations");
  const actions = el("div", undefined, "actions");
  const copy = el("button", "Copy", "copy");
  copy.type = "button";
  copy.onclick = () => copyAnswer(view, copy);
  const again = el("button", "Regenerate", "regenerate");
  again.type = "button";
  again.onclick = () => ask(turn.question, true);
  const up = el("button", "Good", "thumbs-up");
  const down = el("button", "Bad", "thumbs-down");
  for (const [button, rating, label] of [[up, 1, "Good answer"], [down, -1, "Bad answer"]]) {
    button.type = "button";
    button.title = label;
    button.setAttribute("aria-label", label);
    button.setAttribute("aria-pressed", String(turn.feedback === rating));
    button.onclick = () => rate(turn, rating, view);
  }
  actions.append(copy, again, up, down);
  view.append(reasoning, answer, status, citations, actions);
  fillAnswer(view, turn);
  return view;
}

function fillAnswer(view, turn) {
  const cited = (number) => (turn.citations || []).find((x) => x.number === number);
  const openCited = (number) => { const c = cited(number); if (c) openSource(c); };
  const titleOf = (number) => { const c = cited(number); return c ? `${c.document}, ${pagesOf(c)}` : ""; };
  view.querySelector(".answer").replaceChildren(Markdown.render(turn.answer || "", openCited, titleOf));
  // in the order of their numbers, as the answer's [n] marks read ([3], [1], [2] looked shuffled)
  const sources = [...(turn.citations || [])].sort((a, b) => a.number - b.number);
  view.querySelector(".citations").replaceChildren(...sources.map((c) => {
    const item = el("li", undefined, c.cited ? "cited" : "");
    const link = el("a", `[${c.number}] ${c.document}, ${pagesOf(c)}`);
    link.href = "#";
    link.onclick = (e) => { e.preventDefault(); openSource(c); };
    item.append(link);
    return item;
  }));
}

async function copyAnswer(view, button) {
  const turn = current.turns[Number(view.dataset.index)];
  await Markdown.copyText(turn ? turn.answer : "");
  button.textContent = "Copied";
  setTimeout(() => { button.textContent = "Copy"; }, 1500);
}

async function openSource(c) {
  const data = await (await api(`/v1/collections/${encodeURIComponent(collection())}/chunks/${c.chunk_id}`)).json();
  $("source-title").textContent = `[${c.number}] ${data.document}, ${pagesOf(c)}`;
  // Mark where each page starts, highlight the passage the answer used, and bring it (or its page) into view.
  const pre = $("source-text");
  pre.replaceChildren();
  pre.hidden = false;
  const breaks = data.page_breaks.filter(([offset]) => offset > 0);  // offsets where a new page starts
  breaks.unshift([0, data.pages[0]]);
  const quoteAt = c.quote ? data.text.indexOf(c.quote) : -1;
  const quoteEnd = quoteAt + (c.quote || "").length;
  let target = null;
  breaks.forEach(([offset, page], i) => {
    const end = i + 1 < breaks.length ? breaks[i + 1][0] : data.text.length;
    const marker = el("div", `— page ${page} —`, "page-marker");
    if (page === (c.page || data.pages[0]) && !target) target = marker;
    pre.append(marker);
    if (quoteAt >= 0 && quoteAt < end && quoteEnd > offset) {
      const from = Math.max(quoteAt, offset);
      const to = Math.min(quoteEnd, end);
      const mark = el("mark", data.text.slice(from, to), "quote");
      pre.append(document.createTextNode(data.text.slice(offset, from)), mark,
        document.createTextNode(data.text.slice(to, end)));
      if (from === quoteAt) target = mark;
    } else {
      pre.append(document.createTextNode(data.text.slice(offset, end)));
    }
  });
  $("source-markdown").hidden = true;
  $("source-dialog").showModal();
  if (/\.(md|markdown)$/i.test(data.document)) target = showMarkdown(data.text, c.quote) || target;
  if (target) target.scrollIntoView({ block: "center" });
  await showPdf(c, data);
}

// A Markdown source as Markdown (headings, lists, tables), its text pieces that belong to the quote marked;
// the first mark, to scroll to.
function showMarkdown(text, quote) {
  const view = $("source-markdown");
  view.replaceChildren(Markdown.render(text));
  view.hidden = false;
  $("source-text").hidden = true;
  const target = (quote || "").replace(/\s+/g, " ").trim();
  if (target.length < 8) return null;
  const walker = document.createTreeWalker(view, NodeFilter.SHOW_TEXT);
  const pieces = [];
  while (walker.nextNode()) pieces.push(walker.currentNode);
  let first = null;
  for (const node of pieces) {
    const piece = node.textContent.replace(/\s+/g, " ").trim();
    if (piece.length < 3 || !target.includes(piece)) continue;
    const mark = el("mark", undefined, "quote");
    node.replaceWith(mark);
    mark.append(node);
    first = first || mark;
  }
  return first;
}

// --- the PDF viewer: the cited page as the file draws it, the quote marked ------------------------------

let viewing = null;  // { pdf, page, cited, quote }: the PDF open in the source dialog

async function showPdf(c, chunk) {
  viewing = null;
  $("pdf-controls").hidden = true;
  $("pdf-view").hidden = true;
  if (!/\.pdf$/i.test(chunk.document) || typeof PdfView === "undefined") return;
  try {
    const path = `/v1/collections/${encodeURIComponent(collection())}/documents/${c.document_id}/file`;
    const bytes = await (await api(path)).arrayBuffer();
    const pdf = await PdfView.open(bytes);
    const cited = c.page || chunk.pages[0];
    viewing = { pdf, page: cited, cited, quote: c.quote };
    $("pdf-controls").hidden = false;
    $("pdf-view").hidden = false;
    $("source-text").hidden = true;
    $("pdf-text").setAttribute("aria-pressed", "false");
    await drawPdfPage(cited);
  } catch (err) {  // no viewer, the file not kept, or not readable: the extracted text stays
    setNotice(`showing the extracted text: ${err.message}`);
  }
}

async function drawPdfPage(number) {
  if (!viewing) return;
  const page = Math.min(Math.max(number, 1), viewing.pdf.numPages);
  viewing.page = page;
  const quote = page === viewing.cited ? viewing.quote : null;
  const width = Math.min(Math.max($("source-dialog").clientWidth - 40, 300), 900);
  const sheet = await PdfView.draw(viewing.pdf, page, quote, $("pdf-view"), width);
  $("pdf-where").textContent = `page ${page} of ${viewing.pdf.numPages}${page === viewing.cited ? " (cited)" : ""}`;
  $("pdf-prev").disabled = page <= 1;
  $("pdf-next").disabled = page >= viewing.pdf.numPages;
  const mark = sheet.querySelector(".pdf-mark");
  if (mark) mark.scrollIntoView({ block: "center" });
}

// --- settings at hand, remembered per conversation ------------------------------------------------

const SETTINGS = { temperature: "set-temperature", max_tokens: "set-max-tokens", top_k: "set-top-k",
  thinking_budget: "set-thinking-budget", document_id: "set-document", where: "set-where", scope: "set-scope" };

function settingsKey(id) {
  return `docqa-ask-settings:${collection()}:${id === null ? "new" : id}`;
}

function saveSettings() {
  const kept = { thinking: $("thinking").checked };
  for (const [name, id] of Object.entries(SETTINGS)) kept[name] = $(id).value;
  localStorage.setItem(settingsKey(current.id), JSON.stringify(kept));
}

function restoreSettings(id) {
  let kept = {};
  try { kept = JSON.parse(localStorage.getItem(settingsKey(id)) || "{}"); } catch (_) { /* start blank */ }
  $("thinking").checked = Boolean(kept.thinking);
  for (const [name, elementId] of Object.entries(SETTINGS)) $(elementId).value = kept[name] || "";
}

// "company=3M, year=2022" -> {company: "3M", year: "2022"}; a part without "=" is an error naming it.
function parseWhere(text) {
  const where = {};
  for (const part of text.split(/[,;]/).map((p) => p.trim()).filter(Boolean)) {
    const at = part.indexOf("=");
    if (at <= 0) throw new Error(`filter "${part}" is not field=value`);
    where[part.slice(0, at).trim()] = part.slice(at + 1).trim();
  }
  return where;
}

// The ask's settings as the API names them; blank ones are left to the server's defaults.
function askSettings() {
  const body = {};
  const number = (id, parse) => { const v = $(id).value.trim(); return v === "" ? undefined : parse(v); };
  body.temperature = number("set-temperature", parseFloat);
  body.max_tokens = number("set-max-tokens", (v) => parseInt(v, 10));
  body.top_k = number("set-top-k", (v) => parseInt(v, 10));
  body.thinking_budget = number("set-thinking-budget", (v) => parseInt(v, 10));
  body.document_id = number("set-document", (v) => parseInt(v, 10));
  const where = parseWhere($("set-where").value);
  if (Object.keys(where).length) body.where = where;
  if ($("set-scope").value) body.scope = $("set-scope").value;
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}

// --- asking ------------------------------------------------------------------------------------

async function ask(question, regenerate) {
  if (running || !question) return;
  const turn = { question, answer: "", reasoning: "", citations: [], status: "searching…", done: false };
  const index = current.turns.length;  // a regenerated answer is kept as a new turn: both stay on the server
  current.turns.push(turn);
  renderThread();
  const view = $("thread").querySelector(`.turn[data-index="${index}"]`);
  view.scrollIntoView({ block: "end" });
  const controller = new AbortController();
  running = { controller, turn, view, index };
  setAsking(true);
  // the server carries the conversation's earlier questions; regenerate asks past the answer cache
  try {
    const body = { question, thinking: $("thinking").checked, stream: true, cache: !regenerate, ...askSettings() };
    if (current.id === null) {
      const made = await (await api(conversationsPath(), {
        method: "POST", headers: { "Content-Type": "application/json" }, body: "{}",
      })).json();
      current.id = made.id;
      localStorage.setItem(rememberedKey(), String(made.id));
      saveSettings();  // the new conversation keeps the settings it was started with; the next starts blank
      localStorage.removeItem(settingsKey(null));
    }
    const response = await api(conversationsPath(`/${current.id}/messages`), {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
      signal: controller.signal,
    });
    await readEvents(response.body.getReader(), (kind, data) => handle(kind, data));
  } catch (err) {
    turn.status = controller.signal.aborted ? "stopped" : `error: ${err.message}`;
    turn.done = true;
  } finally {
    running = null;
    setAsking(false);
    updateTurn(view, turn);
    await loadConversations();
  }
}

function setAsking(on) {
  $("ask-button").disabled = on;
  $("stop-button").hidden = !on;
}

function updateTurn(view, turn) {
  const status = view.querySelector(".status");
  status.textContent = turn.status;
  if (turn.done) status.dataset.done = "1";
  const reasoning = view.querySelector(".reasoning");
  reasoning.hidden = !turn.reasoning;
  reasoning.querySelector("pre").textContent = turn.reasoning;
  fillAnswer(view, turn);
}

async function readEvents(reader, onEvent) {
  // Server-Sent Events over fetch: "event: kind\ndata: json\n\n" blocks, split as they arrive.
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const kind = (block.match(/^event: (.*)$/m) || [])[1];
      const data = JSON.parse((block.match(/^data: (.*)$/m) || [, "{}"])[1]);
      onEvent(kind, data);
    }
  }
}

function handle(kind, data) {
  const { turn, view } = running;
  if (kind === "citations") {
    turn.citations = data.citations;
    turn.warnings = data.warnings || [];
    turn.status = data.warnings ? `generating… (${data.warnings.join("; ")})` : "generating…";
  } else if (kind === "reading") {  // a question over many documents (or a long one's parts) reads them at once
    turn.status = `read ${data.read} of ${data.total}: ${data.document}`;
  } else if (kind === "progress") {
    const percent = Math.floor((100 * data.done) / Math.max(data.prompt_tokens, 1));
    turn.status = `reading ${data.prompt_tokens.toLocaleString("en")} tokens: ${percent}%`;
  } else if (kind === "reasoning") {
    turn.reasoning += data.text;
  } else if (kind === "answer") {
    turn.answer += data.text;
    turn.status = "generating…";
  } else if (kind === "done") {
    turn.citations = data.citations;
    if (data.message_id) turn.id = data.message_id;  // the message kept: feedback goes to it, by its ID
    const t = data.timings;
    turn.status = data.cached ? "answered from the cache" :
      `first token ${((t.ttft_ms || 0) / 1000).toFixed(1)} s · ${t.completion_tokens} tokens in ${(t.total_ms / 1000).toFixed(1)} s`;
    turn.status += endNote(data.finish_reason) + warnNote(turn.warnings);
    turn.done = true;
  } else if (kind === "error") {
    turn.status = `error: ${data.message}`;
    turn.done = true;
  }
  updateTurn(view, turn);
}

function setUp() {
  const zone = $("dropzone");
  zone.addEventListener("dragover", (e) => { e.preventDefault(); zone.classList.add("over"); });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (e) => {
    e.preventDefault();
    zone.classList.remove("over");
    [...e.dataTransfer.files].forEach((file) => uploadFile(file));
  });
  $("file-input").addEventListener("change", (e) => { [...e.target.files].forEach((file) => uploadFile(file)); e.target.value = ""; });
  $("collection").addEventListener("change", switchCollection);
  $("new-collection").addEventListener("submit", createCollection);
  $("delete-collection").addEventListener("click", deleteCollection);
  $("set-key").addEventListener("click", askForKey);
  $("show-documents").addEventListener("click", toggleDocuments);
  showDocuments(!phone() && localStorage.getItem("docqa-documents") !== "closed");
  $("ask-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const question = $("question").value.trim();
    if (!question || running) return;
    $("question").value = "";
    ask(question);
  });
  $("question").addEventListener("keydown", (e) => {  // Enter asks, Shift+Enter is a new line
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      $("ask-form").requestSubmit();
    }
  });
  $("stop-button").addEventListener("click", () => { if (running) running.controller.abort(); });
  $("new-thread").addEventListener("click", () => openConversation(null));
  $("conversation-search").addEventListener("input", () => loadConversations());
  $("ask-settings").addEventListener("change", saveSettings);
  $("pdf-prev").addEventListener("click", () => viewing && drawPdfPage(viewing.page - 1));
  $("pdf-next").addEventListener("click", () => viewing && drawPdfPage(viewing.page + 1));
  $("pdf-text").addEventListener("click", () => {  // the chunk's extracted text, the quote marked, instead
    const text = $("source-text").hidden;
    $("source-text").hidden = !text;
    $("pdf-view").hidden = text;
    $("pdf-text").setAttribute("aria-pressed", String(text));
  });
  $("thinking").addEventListener("change", saveSettings);
  loadCollections().catch((err) => setNotice(`error: ${err.message}`));
}

setUp();
