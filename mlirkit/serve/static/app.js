"use strict";
// The page: one query, searched without and with the query-time SHIFT (POST /v1/search), side by side.
const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];
const colours = {};
function colour(lang) {
  if (!(lang in colours)) colours[lang] = PALETTE[Object.keys(colours).length % PALETTE.length];
  return colours[lang];
}
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
function render(section, answer) {
  const hits = section.querySelector(".hits"), mix = section.querySelector(".mix");
  hits.replaceChildren(); mix.replaceChildren();
  if (answer.detail) { section.querySelector(".language").textContent = answer.detail; return; }
  const l = answer.language;
  section.querySelector(".language").textContent = "query language: " + l.lang + " (" + l.how +
    (l.confidence !== null ? ", " + l.confidence.toFixed(2) : "") + ")" + (answer.shift ? "" : " · not shifted");
  const counts = {};
  for (const h of answer.hits) counts[h.lang] = (counts[h.lang] || 0) + 1;
  for (const [lang, n] of Object.entries(counts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))) {
    const part = el("span", "mix-part", lang + " " + n);
    part.style.flexGrow = n; part.style.background = colour(lang);
    part.title = lang + ": " + n + " of " + answer.hits.length;
    mix.appendChild(part);
  }
  for (const h of answer.hits) {
    const li = el("li", "hit");
    const badge = el("span", "badge", h.lang); badge.style.background = colour(h.lang);
    li.appendChild(badge);
    li.appendChild(el("span", "doc-id", h.doc_id));
    li.appendChild(el("span", "score", h.score.toFixed(3)));
    if (h.snippet) li.appendChild(el("p", "snippet", h.snippet));
    hits.appendChild(li);
  }
}
async function ask(query, k, shift) {
  const r = await fetch("/v1/search", {method: "POST", headers: {"Content-Type": "application/json"},
                                       body: JSON.stringify({query: query, k: k, shift: shift})});
  return r.json();
}
document.getElementById("search-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const query = document.getElementById("query").value, k = parseInt(document.getElementById("k").value, 10);
  const status = document.getElementById("status");
  status.textContent = "searching…";
  try {
    const [plain, shifted] = await Promise.all([ask(query, k, false), ask(query, k, true)]);
    render(document.getElementById("plain"), plain);
    render(document.getElementById("shifted"), shifted);
    status.textContent = "";
    document.body.dataset.done = "1";
  } catch (e) {
    status.textContent = "error: " + e;
  }
});
