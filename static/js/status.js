// Live status on "my submissions": polls /api/v1/submissions/<id> for rows still in flight.
(function () {
  "use strict";
  var WAITING = { received: true, queued: true, scoring: true };
  var rows = Array.prototype.slice.call(document.querySelectorAll("tr.submission"));

  function render(row, body) {
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
        if (left === 0) { window.setTimeout(poll, 1500); }
      });
      xhr.send();
    });
  }
  window.setTimeout(poll, 1000);
}());
