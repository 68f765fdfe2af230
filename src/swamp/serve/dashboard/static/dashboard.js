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
    // a step that starts waiting needs its approval form: the server renders it
    if (d.status === "waiting_approval" && !document.querySelector("[data-approval='" + CSS.escape(key) + "']")) {
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

document.addEventListener("DOMContentLoaded", () => {
  const run = document.getElementById("run");
  if (run && run.hasAttribute("data-events")) followRun(run);
});
