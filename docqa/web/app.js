// docqa's web page: plain JavaScript against the REST API, no build step.
// Document text is untrusted: it is only ever put into the page as textContent, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
let apiKey = localStorage.getItem("docqa-api-key") || "";

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

function collection() {
  return $("collection").value || "default";
}

async function loadCollections(select) {
  const data = await (await api("/v1/collections")).json();
  const chosen = select || collection();
  const names = data.collections.map((c) => c.name);
  if (chosen && !names.includes(chosen)) names.push(chosen);
  if (!names.length) names.push("default");
  $("collection").replaceChildren(...names.map((n) => {
    const option = el("option", n);
    option.value = n;
    option.selected = n === chosen;
    return option;
  }));
  await loadDocuments();
}

async function loadDocuments() {
  const list = $("documents");
  try {
    const data = await (await api(`/v1/collections/${encodeURIComponent(collection())}/documents`)).json();
    list.replaceChildren(...data.documents.map((d) => {
      const item = el("li", `${d.name} · ${d.status === "ready" ? `${d.pages} pages, ${d.chunks} chunks` : d.error}`,
        d.status === "ready" ? "" : "failed");
      return item;
    }));
  } catch (err) {
    list.replaceChildren(el("li", "no documents yet"));
  }
}

function uploadFile(file) {
  // One request per file, so each file has its own progress bar and its own verdict.
  const item = el("li");
  const label = el("div", file.name);
  const bar = el("progress");
  bar.max = 100;
  bar.value = 0;
  item.append(label, bar);
  $("uploads").prepend(item);
  const form = new FormData();
  form.append("files", file, file.name);
  const xhr = new XMLHttpRequest();
  xhr.open("POST", `/v1/collections/${encodeURIComponent(collection())}/documents`);
  if (apiKey) xhr.setRequestHeader("Authorization", `Bearer ${apiKey}`);
  xhr.upload.onprogress = (e) => { if (e.lengthComputable) bar.value = (100 * e.loaded) / e.total; };
  xhr.upload.onload = () => { bar.removeAttribute("value"); label.textContent = `${file.name}: indexing…`; };
  xhr.onload = () => {
    bar.remove();
    let body = {};
    try { body = JSON.parse(xhr.responseText); } catch (_) { /* keep empty */ }
    if (xhr.status !== 200) {
      label.textContent = `${file.name}: failed: ${(body.error && body.error.message) || xhr.status}`;
      label.className = "failed";
    } else if (body.failed && body.failed.length) {
      label.textContent = `${file.name}: failed: ${body.failed[0].error}`;
      label.className = "failed";
    } else {
      const f = body.files[0];
      label.textContent = `${file.name}: ${f.status}, ${f.pages} pages, ${f.chunks} chunks`;
      label.className = "ok";
      loadDocuments();
    }
  };
  xhr.onerror = () => { label.textContent = `${file.name}: failed: network error`; label.className = "failed"; };
  xhr.send(form);
}

function pagesOf(c) {
  const [first, last] = c.pages;
  let where = c.page ? `p. ${c.page}` : first === last ? `p. ${first}` : `pp. ${first}-${last}`;
  if (c.section) where += `, "${c.section}"`;
  return c.ocr ? `${where}, read by OCR` : where;
}

function showCitations(citations) {
  $("citations").replaceChildren(...citations.map((c) => {
    const item = el("li", undefined, c.cited ? "cited" : "");
    const link = el("a", `[${c.number}] ${c.document}, ${pagesOf(c)}`);
    link.href = "#";
    link.dataset.chunk = c.chunk_id;
    link.onclick = (e) => { e.preventDefault(); openSource(c); };
    item.append(link);
    return item;
  }));
}

async function openSource(c) {
  const data = await (await api(`/v1/collections/${encodeURIComponent(collection())}/chunks/${c.chunk_id}`)).json();
  $("source-title").textContent = `[${c.number}] ${data.document}, ${pagesOf(c)}`;
  // Mark where each page starts, and bring the cited page into view.
  const pre = $("source-text");
  pre.replaceChildren();
  const breaks = data.page_breaks.filter(([offset]) => offset > 0);  // offsets where a new page starts
  breaks.unshift([0, data.pages[0]]);
  let target = null;
  breaks.forEach(([offset, page], i) => {
    const end = i + 1 < breaks.length ? breaks[i + 1][0] : data.text.length;
    const marker = el("div", `— page ${page} —`, "page-marker");
    if (page === (c.page || data.pages[0])) target = marker;
    pre.append(marker, document.createTextNode(data.text.slice(offset, end)));
  });
  $("source-dialog").showModal();
  if (target) target.scrollIntoView({ block: "start" });
}

let lastQuestion = "";  // the question asked before: a follow-up is searched and asked with it

async function ask(event) {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question) return;
  const earlier = $("follow-up").checked && lastQuestion && lastQuestion !== question ? lastQuestion : null;
  $("ask-button").disabled = true;
  $("answer").textContent = "";
  $("reasoning-text").textContent = "";
  $("reasoning").hidden = true;
  $("citations").replaceChildren();
  $("status").textContent = "searching…";
  delete $("status").dataset.done;
  try {
    const response = await api("/v1/ask", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        question,
        collection: collection(),
        thinking: $("thinking").checked,
        stream: true,
        earlier_question: earlier,
      }),
    });
    await readEvents(response.body.getReader());
    lastQuestion = question;
    $("last-question").textContent = question.length > 80 ? `${question.slice(0, 77)}…` : question;
    $("follow-up-label").hidden = false;
  } catch (err) {
    $("status").textContent = `error: ${err.message}`;
  } finally {
    $("ask-button").disabled = false;
  }
}

async function readEvents(reader) {
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
      handle(kind, data);
    }
  }
}

function handle(kind, data) {
  if (kind === "citations") {
    showCitations(data.citations);
    $("status").textContent = data.warnings ? `generating… (${data.warnings.join("; ")})` : "generating…";
  } else if (kind === "reasoning") {
    $("reasoning").hidden = false;
    $("reasoning").open = true;
    $("reasoning-text").textContent += data.text;
  } else if (kind === "answer") {
    $("reasoning").open = false;
    $("answer").textContent += data.text;
  } else if (kind === "done") {
    showCitations(data.citations);
    const t = data.timings;
    $("status").textContent = data.cached ? "answered from the cache" :
      `first token ${(t.ttft_ms / 1000).toFixed(1)} s · ${t.completion_tokens} tokens in ${(t.total_ms / 1000).toFixed(1)} s`;
    $("status").dataset.done = "1";
  } else if (kind === "error") {
    $("status").textContent = `error: ${data.message}`;
  }
}

function setUp() {
  const zone = $("dropzone");
  zone.addEventListener("dragover", (e) => { e.preventDefault(); zone.classList.add("over"); });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (e) => {
    e.preventDefault();
    zone.classList.remove("over");
    [...e.dataTransfer.files].forEach(uploadFile);
  });
  $("file-input").addEventListener("change", (e) => { [...e.target.files].forEach(uploadFile); e.target.value = ""; });
  $("collection").addEventListener("change", loadDocuments);
  $("new-collection").addEventListener("submit", (e) => {
    e.preventDefault();
    const name = $("new-collection-name").value.trim();
    if (name) loadCollections(name);
    $("new-collection-name").value = "";
  });
  $("set-key").addEventListener("click", askForKey);
  $("ask-form").addEventListener("submit", ask);
  loadCollections().catch((err) => { $("status").textContent = `error: ${err.message}`; });
}

setUp();
