// Admin pack build progress: polls the page's JSON status until the build is done or failed,
// then reloads once so the server renders the result (report, import, error).
(function () {
  "use strict";
  var box = document.getElementById("build");
  if (!box) { return; }
  var FINISHED = { done: true, failed: true };
  var bar = document.getElementById("build-bar");
  var state = document.getElementById("build-state");
  var progress = document.getElementById("build-progress");

  function render(body) {
    state.textContent = body.state;
    state.className = "status status-" + body.state;
    if (body.total) {
      bar.max = body.total;
      bar.value = Math.min(body.done, body.total);
    } else {
      bar.removeAttribute("value"); // unknown total: an indeterminate bar
    }
    progress.textContent = body.done + (body.total ? " of " + body.total : "") + " · " +
      (body.message || "");
  }

  function poll() {
    var xhr = new XMLHttpRequest();
    xhr.open("GET", box.getAttribute("data-status-url"));
    xhr.setRequestHeader("Accept", "application/json");
    xhr.addEventListener("loadend", function () {
      var body = null;
      if (xhr.status === 200) {
        try { body = JSON.parse(xhr.responseText); } catch (err) { body = null; }
      }
      if (body) {
        render(body);
        if (FINISHED[body.state]) { window.location.reload(); return; }
      }
      window.setTimeout(poll, 1500);
    });
    xhr.send();
  }
  if (!FINISHED[box.getAttribute("data-state")]) { window.setTimeout(poll, 1000); }
}());
