// A cited PDF page as the file draws it: PDF.js (vendored at build time from the npm package pdfjs-dist by
// tools/vendor_pdfjs.sh, served by docqa) renders the page to a canvas, and the text items of the page that
// belong to the quote are marked over it. The file's bytes come from the API (with the page's key); PDF.js runs
// its parser in a worker and evaluates nothing from the file (isEvalSupported: false).
"use strict";

const PdfView = (() => {
  const BASE = "/static/vendor/pdfjs/";
  let library = null;

  async function pdfjs() {
    if (!library) {
      library = await import(`${BASE}pdf.min.mjs`);
      library.GlobalWorkerOptions.workerSrc = `${BASE}pdf.worker.min.mjs`;
    }
    return library;
  }

  const squash = (text) => text.replace(/\s+/g, "");

  // A point of the PDF's user space on the drawn page (the viewport's transform matrix).
  function toViewport(viewport, x, y) {
    const [a, b, c, d, e, f] = viewport.transform;
    return [a * x + c * y + e, b * x + d * y + f];
  }

  async function open(bytes) {
    const lib = await pdfjs();
    return lib.getDocument({
      data: bytes, isEvalSupported: false, cMapUrl: `${BASE}cmaps/`, cMapPacked: true,
      standardFontDataUrl: `${BASE}standard_fonts/`,
    }).promise;
  }

  // The page's text items that are part of the quote (items of 3+ characters, or the whole quote), as boxes.
  async function quoteBoxes(page, viewport, quote) {
    const target = squash(quote || "");
    if (target.length < 8) return [];
    const boxes = [];
    for (const item of (await page.getTextContent()).items) {
      const text = squash(item.str || "");
      if (text.length < 3 && text !== target) continue;
      if (!target.includes(text)) continue;
      const [, , c, d, x, y] = item.transform;
      const height = item.height || Math.hypot(c, d);
      const [x1, y1] = toViewport(viewport, x, y);
      const [x2, y2] = toViewport(viewport, x + item.width, y + height);
      boxes.push({ left: Math.min(x1, x2), top: Math.min(y1, y2), width: Math.abs(x2 - x1), height: Math.abs(y2 - y1) });
    }
    return boxes;
  }

  // Draw page `number` of the open document into `container`, `width` pixels wide, marking `quote` on it.
  async function draw(pdf, number, quote, container, width) {
    const page = await pdf.getPage(number);
    const viewport = page.getViewport({ scale: width / page.getViewport({ scale: 1 }).width });
    const canvas = document.createElement("canvas");
    canvas.width = Math.floor(viewport.width);
    canvas.height = Math.floor(viewport.height);
    await page.render({ canvasContext: canvas.getContext("2d"), viewport }).promise;
    const sheet = document.createElement("div");
    sheet.className = "pdf-page";
    sheet.dataset.page = String(number);
    sheet.style.width = `${canvas.width}px`;
    sheet.append(canvas);
    for (const box of await quoteBoxes(page, viewport, quote)) {
      const mark = document.createElement("div");
      mark.className = "pdf-mark";
      Object.assign(mark.style, {
        left: `${box.left}px`, top: `${box.top}px`, width: `${box.width}px`, height: `${box.height}px`,
      });
      sheet.append(mark);
    }
    container.replaceChildren(sheet);
    return sheet;
  }

  return { open, draw };
})();
