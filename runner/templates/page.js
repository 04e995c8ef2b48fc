// The results page's script (runner/templates/page.html): decodes the embedded data (gzip +
// base64, decompressed by the browser's own DecompressionStream), draws the list of cases not
// passed with their drill-down, and applies the filters to the list and the matrix. Plain
// DOM, no library, nothing fetched. Long values are shortened as the terminal shows them, with
// the full value one click away. Text reaches the page only as text (textContent, never
// markup); names and messages arrive with control and bidi characters already written as
// \u{XXXX} by the kit, and values are escaped the same way here, as they are drawn (ADR 0059).
"use strict";
(function () {
  const LABEL = { passed: "passed", failed: "failed", errored: "errored", expected_failure: "xfail", unexpected_pass: "unexpected pass", not_applicable: "not applicable", ignored: "ignored" };
  const PAGE = 300;
  const $ = (id) => document.getElementById(id);
  let data = null;
  let shown = PAGE;

  async function decode() {
    const b64 = $("data").textContent.trim();
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else if (k === "text") e.textContent = v; else e.setAttribute(k, v);
    }
    for (const c of children) if (c != null) e.append(c);
    return e;
  }

  // The kit's rule (runner/src/inert.rs): C0 and C1 controls, DEL, the line and paragraph
  // separators and the bidi controls are shown as \u{XXXX}, so a value reads in the order it
  // is stored. JSON.stringify escapes C0 itself, and newlines are laid out by the <pre>.
  const HAZARD = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
  const visible = (s) => s.replace(HAZARD, (c) => "\\u{" + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0") + "}");
  const json = (v) => visible(JSON.stringify(v, null, 2));

  // A value as pretty JSON; when its shortened form (computed by the kit, as in the terminal)
  // differs, that is shown first with a button for the whole value.
  function value(full, short) {
    const pre = el("pre", { class: "value", text: json(short === undefined ? full : short) });
    if (short === undefined) return pre;
    const btn = el("button", { type: "button", class: "full", text: "show the full value" });
    btn.addEventListener("click", () => { pre.textContent = json(full); btn.remove(); });
    return el("div", {}, pre, btn);
  }

  function filters() {
    return { imp: $("f-implementation").value, col: $("f-column").value, status: $("f-status").value };
  }

  function matches(d, f) {
    return (f.imp === "" || String(d.implementation) === f.imp) && (f.col === "" || d.column === f.col) && (f.status === "" || d.status === f.status);
  }

  function caseItem(d) {
    const imp = data.implementations[d.implementation];
    const body = el("dl", { class: "case-body" });
    const add = (term, node) => { body.append(el("dt", { text: term }), el("dd", {}, node)); };
    add("implementation", document.createTextNode(imp.name));
    if (d.layer) add("layer", document.createTextNode(d.layer));
    if (d.message) add(d.status === "not_applicable" ? "why not applicable" : "reason", el("span", { class: "message", text: d.message }));
    if (d.expected !== null && d.expected !== undefined) add("expected", value(d.expected, d.expected_short));
    if (d.actual !== null && d.actual !== undefined) add("actual", value(d.actual, d.actual_short));
    if (d.vector && data.vectors[d.vector]) {
      const v = data.vectors[d.vector];
      const det = el("details", { class: "vector", id: "vector-" + d.vector + "-" + d.implementation },
        el("summary", {}, el("a", { href: "#vector-" + d.vector + "-" + d.implementation, text: d.vector }), document.createTextNode(" (" + v.file + ")")),
        el("pre", { text: json(v.vector) }));
      add("vector", det);
    }
    const summary = el("summary", {}, el("span", { class: "badge s-" + d.status, text: LABEL[d.status] }), document.createTextNode(d.name + " — " + imp.name));
    return el("li", { class: "case", "data-status": d.status, "data-column": d.column, "data-implementation": String(d.implementation) }, el("details", {}, summary, body));
  }

  function drawList() {
    const f = filters();
    const hits = data.details.filter((d) => matches(d, f));
    const list = $("case-list");
    list.replaceChildren(...hits.slice(0, shown).map(caseItem));
    $("shown").textContent = hits.length === 0 ? "No case matches the filters." : "Showing " + Math.min(shown, hits.length) + " of " + hits.length + " cases not passed.";
    $("more").hidden = hits.length <= shown;
  }

  function drawMatrix() {
    const f = filters();
    for (const tr of document.querySelectorAll("#matrix tbody tr")) tr.hidden = f.imp !== "" && tr.dataset.implementation !== f.imp;
    for (const c of document.querySelectorAll("#matrix [data-column]")) {
      c.hidden = f.col !== "" && c.dataset.column !== f.col;
      c.classList.toggle("selected", c.tagName === "TD" && f.col !== "" && f.imp !== "" && c.dataset.column === f.col && c.dataset.implementation === f.imp);
    }
    for (const s of document.querySelectorAll("#matrix .count")) s.classList.toggle("dim", f.status !== "" && s.dataset.status !== f.status);
  }

  function redraw() { shown = PAGE; drawMatrix(); if (data) drawList(); }

  function pick(td) {
    $("f-implementation").value = td.dataset.implementation;
    $("f-column").value = td.dataset.column;
    redraw();
    $("cases").scrollIntoView();
  }

  for (const id of ["f-implementation", "f-column", "f-status"]) $(id).addEventListener("change", redraw);
  $("f-reset").addEventListener("click", () => { for (const id of ["f-implementation", "f-column", "f-status"]) $(id).value = ""; redraw(); });
  $("more").addEventListener("click", () => { shown += PAGE; drawList(); });
  for (const td of document.querySelectorAll("#matrix td.cell")) {
    td.addEventListener("click", () => pick(td));
    td.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); pick(td); } });
  }
  decode().then((d) => { data = d; document.body.dataset.ready = "true"; drawList(); })
    .catch((e) => { $("shown").textContent = "The embedded data could not be read: " + e; throw e; });
})();
