// Live status on "my submissions": polls /api/v1/submissions/<id> for rows still in flight;
// when one is scored (or fails with a long problem list) the page reloads once so that its scores and "select" button appear.
(function () {
  "use strict";
  var WAITING = { received: true, queued: true, scoring: true };
  var rows = Array.prototype.slice.call(document.querySelectorAll(".submission[data-status-url]"));

  var reloadWhenDone = false;
  function render(row, body) {
    if (body.status === "scored" && row.getAttribute("data-status") !== "scored") {
      reloadWhenDone = true;
    }
    // a long problem list is rendered collapsed by the server: reload rather than spill it
    if ((body.failure_lines || []).length > 3) { reloadWhenDone = true; }
    row.setAttribute("data-status", body.status);
    var badge = row.querySelector(".status");
    badge.textContent = body.status;
    badge.className = "status status-" + body.status;
    var list = row.querySelector(".failure-lines");
    list.textContent = "";
    (body.failure_lines || []).forEach(function (line) {
      var li = document.createElement("li");
      li.textContent = line;
      list.appendChild(li);
    });
  }

  function poll() {
    var pending = rows.filter(function (r) { return WAITING[r.getAttribute("data-status")]; });
    if (!pending.length) { return; }
    var left = pending.length;
    pending.forEach(function (row) {
      var xhr = new XMLHttpRequest();
      xhr.open("GET", row.getAttribute("data-status-url"));
      xhr.setRequestHeader("Accept", "application/json");
      xhr.addEventListener("loadend", function () {
        if (xhr.status === 200) {
          try { render(row, JSON.parse(xhr.responseText)); } catch (err) { /* keep polling */ }
        }
        left -= 1;
        if (left === 0) {
          if (reloadWhenDone) { window.location.reload(); return; }
          window.setTimeout(poll, 1500);
        }
      });
      xhr.send();
    });
  }
  window.setTimeout(poll, 1000);
}());
