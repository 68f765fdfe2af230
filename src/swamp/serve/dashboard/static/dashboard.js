// The dashboard's only script: a live run page follows the run's events
// (server-sent, the API's framing) and updates statuses and the log in place.
"use strict";

function followRun(section) {
  const url = section.getAttribute("data-events");
  const log = document.getElementById("log");
  const source = new EventSource(url);
  source.addEventListener("step", (e) => {
    const d = JSON.parse(e.data);
    const key = d.job + "/" + d.step;
    for (const li of document.querySelectorAll("li.step")) {
      if (li.getAttribute("data-step") !== key) continue;
      const status = li.querySelector("[data-role=status]");
      status.textContent = d.status;
      status.className = "status s-" + d.status;
      if (d.durationMs != null) li.querySelector("[data-role=took]").textContent = d.durationMs + " ms";
    }
    for (const g of document.querySelectorAll("svg.graph g.step")) {
      if (g.getAttribute("data-step") !== key) continue;
      g.setAttribute("class", "step s-" + d.status);
      g.setAttribute("data-status", d.status);
    }
    // a step that starts waiting needs its approval or signal form: the server renders it
    const box = d.status === "waiting_approval" ? "data-approval" : d.status === "waiting_signal" ? "data-signal" : null;
    if (box && !document.querySelector("[" + box + "='" + CSS.escape(key) + "']")) {
      source.close();
      location.reload();
    }
  });
  source.addEventListener("log", (e) => {
    const d = JSON.parse(e.data);
    if (d.reset) log.textContent = d.text; else log.textContent += d.text;
    log.scrollTop = log.scrollHeight;
  });
  source.addEventListener("status", () => { source.close(); location.reload(); });
  source.addEventListener("result", () => { source.close(); location.reload(); });
  source.addEventListener("error", (e) => {
    if (e.data) { source.close(); }  // the run is gone or not readable: stop asking
  });
}

// A run form built from the workflow's declared inputs: checked here first
// (the server checks again and decides); a problem is shown next to its field.
function checkField(el) {
  const value = el.value;
  if (el.validity && !el.validity.valid) return el.validationMessage || "not valid";
  if (el.required && value.trim() === "") return "required";
  if (value.trim() === "") return "";
  if (el.hasAttribute("data-json")) {
    let parsed;
    try { parsed = JSON.parse(value); } catch (e) { return "not valid JSON: " + e.message; }
    if (el.getAttribute("data-json") === "object" && (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)))
      return "a JSON object of input names and values";
  }
  const min = el.getAttribute("minlength"), pattern = el.getAttribute("data-pattern");
  if (min !== null && value.length < Number(min)) return "must be at least " + min + " characters long";
  if (pattern !== null) {
    try { if (!new RegExp(pattern).test(value)) return "must match " + pattern; } catch (e) { /* the server checks it */ }
  }
  return "";
}

function validateForm(form) {
  form.addEventListener("submit", (event) => {
    let first = null;
    for (const field of form.querySelectorAll(".field")) {
      const el = field.querySelector("input, select, textarea");
      const shown = field.querySelector(".field-error");
      const problem = checkField(el);
      shown.textContent = problem;
      field.classList.toggle("invalid", problem !== "");
      if (problem && !first) first = el;
    }
    if (first) { event.preventDefault(); first.focus(); }
  });
}

document.addEventListener("DOMContentLoaded", () => {
  const run = document.getElementById("run");
  if (run && run.hasAttribute("data-events")) followRun(run);
  for (const form of document.querySelectorAll("form[data-validate]")) validateForm(form);
});
