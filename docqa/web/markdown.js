// Markdown for answers, rendered safely: the text is parsed here and the page is built with
// createElement and textContent only, never innerHTML, so nothing in an answer or a document (which
// the answer may quote) can become markup or script. Covers what models write: paragraphs, headings,
// lists, **bold**, *italic*, `code`, fenced code blocks (with a Copy button), tables, and [n] source marks
// (chips that name their source and open it).
"use strict";

const Markdown = (() => {
  const INLINE = /(\*\*[^*]+\*\*|`[^`]+`|\*[^*\s][^*]*\*|\[\d{1,3}(?:\s*[,，、]\s*\d{1,3})*\])/g;

  function inline(parent, text, onCite, titleOf) {
    let at = 0;
    for (const match of text.matchAll(INLINE)) {
      if (match.index > at) parent.append(document.createTextNode(text.slice(at, match.index)));
      const token = match[0];
      let node;
      if (token.startsWith("**")) {
        node = document.createElement("strong");
        node.textContent = token.slice(2, -2);
      } else if (token.startsWith("`")) {
        node = document.createElement("code");
        node.textContent = token.slice(1, -1);
      } else if (token.startsWith("*")) {
        node = document.createElement("em");
        node.textContent = token.slice(1, -1);
      } else {
        node = document.createElement("a");
        node.href = "#";
        node.className = "cite";
        node.textContent = token;
        const number = parseInt(token.slice(1), 10);
        const title = titleOf ? titleOf(number) : "";
        if (title) node.title = title;
        node.onclick = (e) => { e.preventDefault(); if (onCite) onCite(number); };
      }
      parent.append(node);
      at = match.index + token.length;
    }
    if (at < text.length) parent.append(document.createTextNode(text.slice(at)));
  }

  function cells(line) {
    return line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
  }

  function table(lines, onCite, titleOf) {
    const wrap = document.createElement("div");
    wrap.className = "table-wrap";
    const node = document.createElement("table");
    lines.forEach((line, i) => {
      if (i === 1) return;  // the |---|---| rule
      const row = document.createElement("tr");
      for (const cell of cells(line)) {
        const td = document.createElement(i === 0 ? "th" : "td");
        inline(td, cell, onCite, titleOf);
        row.append(td);
      }
      node.append(row);
    });
    wrap.append(node);
    return wrap;
  }

  // Copy text to the clipboard; without the clipboard API (plain http on another host), the old way.
  async function copyText(text) {
    try {
      await navigator.clipboard.writeText(text);
    } catch (_) {
      const area = document.createElement("textarea");
      area.value = text;
      document.body.append(area);
      area.select();
      document.execCommand("copy");
      area.remove();
    }
  }

  function codeBlock(text) {
    const wrap = document.createElement("div");
    wrap.className = "code-block";
    const pre = document.createElement("pre");
    const code = document.createElement("code");
    code.textContent = text;
    pre.append(code);
    const copy = document.createElement("button");
    copy.type = "button";
    copy.className = "copy-code";
    copy.textContent = "Copy";
    copy.onclick = async () => {
      await copyText(text);
      copy.textContent = "Copied";
      setTimeout(() => { copy.textContent = "Copy"; }, 1500);
    };
    wrap.append(copy, pre);
    return wrap;
  }

  function render(text, onCite, titleOf) {
    const root = document.createDocumentFragment();
    const lines = text.replace(/\r\n?/g, "\n").split("\n");
    let i = 0;
    let paragraph = [];
    const flush = () => {
      if (!paragraph.length) return;
      const p = document.createElement("p");
      paragraph.forEach((line, k) => {
        if (k) p.append(document.createElement("br"));
        inline(p, line, onCite, titleOf);
      });
      root.append(p);
      paragraph = [];
    };
    while (i < lines.length) {
      const line = lines[i];
      if (/^```/.test(line)) {
        flush();
        const body = [];
        i += 1;
        while (i < lines.length && !/^```/.test(lines[i])) body.push(lines[i++]);
        i += 1;
        root.append(codeBlock(body.join("\n")));
        continue;
      }
      const heading = line.match(/^(#{1,6})\s+(.*)$/);
      if (heading) {
        flush();
        const h = document.createElement(`h${Math.min(heading[1].length + 3, 6)}`);
        inline(h, heading[2], onCite, titleOf);
        root.append(h);
        i += 1;
        continue;
      }
      if (/^\s*\|.*\|\s*$/.test(line) && i + 1 < lines.length && /^\s*\|?\s*:?-{2,}/.test(lines[i + 1])) {
        flush();
        const rows = [];
        while (i < lines.length && /^\s*\|.*\|\s*$/.test(lines[i])) rows.push(lines[i++]);
        root.append(table(rows, onCite, titleOf));
        continue;
      }
      const item = line.match(/^\s*([-*•]|\d{1,3}[.)])\s+(.*)$/);
      if (item) {
        flush();
        const ordered = /\d/.test(item[1]);
        const list = document.createElement(ordered ? "ol" : "ul");
        while (i < lines.length) {
          const m = lines[i].match(/^\s*([-*•]|\d{1,3}[.)])\s+(.*)$/);
          if (!m || /\d/.test(m[1]) !== ordered) break;
          const li = document.createElement("li");
          inline(li, m[2], onCite, titleOf);
          list.append(li);
          i += 1;
        }
        root.append(list);
        continue;
      }
      if (!line.trim()) flush();
      else paragraph.push(line);
      i += 1;
    }
    flush();
    return root;
  }

  return { render, copyText };
})();
