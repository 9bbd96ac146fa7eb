// Upload with a progress bar (XMLHttpRequest upload events), then go to "my submissions".
// Without JavaScript the form still posts normally.
(function () {
  "use strict";
  var form = document.getElementById("upload-form");
  if (!form) { return; }
  var bar = document.getElementById("upload-progress");
  var message = document.getElementById("upload-message");
  var problemsBox = document.getElementById("upload-problems");
  var button = document.getElementById("upload-button");
  var bench = document.getElementById("benchmark");
  var split = document.getElementById("split");

  function fillSplits() {
    var opt = bench.options[bench.selectedIndex];
    var splits = (opt.getAttribute("data-splits") || "").split(",").filter(Boolean);
    var current = split.value;
    split.textContent = "";
    splits.forEach(function (s) {
      var o = document.createElement("option");
      o.value = s; o.textContent = s;
      if (s === current) { o.selected = true; }
      split.appendChild(o);
    });
  }
  if (bench && split) { bench.addEventListener("change", fillSplits); fillSplits(); }

  // The idempotency key names one upload: retrying it (same page, same file) returns the same
  // submission; choosing another file, or coming back to this page, starts a new one.
  var keyField = document.getElementById("idempotency-key");
  var fileField = document.getElementById("file");
  function newKey() {
    var bytes = new Uint8Array(18);
    window.crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }
  if (keyField && fileField) {
    fileField.addEventListener("change", function () { keyField.value = newKey(); });
    window.addEventListener("pageshow", function (e) { if (e.persisted) { keyField.value = newKey(); } });
  }

  function showProblems(problems, total) {
    problemsBox.textContent = "";
    if (!problems || !problems.length) { return; }
    var ul = document.createElement("ul");
    ul.className = "problems";
    problems.forEach(function (p) {
      var where = [];
      if (p.line !== null && p.line !== undefined) { where.push("line " + p.line); }
      if (p.field) { where.push("field '" + p.field + "'"); }
      var li = document.createElement("li");
      li.textContent = (where.length ? where.join(", ") + ": " : "") + p.message;
      ul.appendChild(li);
    });
    if (total > problems.length) {
      var more = document.createElement("li");
      more.textContent = "… and " + (total - problems.length) + " more problems";
      ul.appendChild(more);
    }
    problemsBox.appendChild(ul);
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var xhr = new XMLHttpRequest();
    xhr.open("POST", form.action);
    xhr.setRequestHeader("Accept", "application/json");
    bar.hidden = false; bar.value = 0; button.disabled = true;
    message.textContent = "Uploading…";
    showProblems([], 0);
    xhr.upload.addEventListener("progress", function (e) {
      if (e.lengthComputable) {
        bar.value = Math.round(100 * e.loaded / e.total);
        message.textContent = "Uploading… " + bar.value + "%";
      }
    });
    xhr.upload.addEventListener("load", function () { message.textContent = "Uploaded; checking…"; });
    xhr.addEventListener("load", function () {
      var body = null;
      try { body = JSON.parse(xhr.responseText); } catch (err) { body = null; }
      if (xhr.status === 202 && body) {
        message.textContent = "Received as submission " + body.id + " (" + body.status + ").";
        window.location.assign(body.mine_url || form.getAttribute("data-status-base"));
        return;
      }
      button.disabled = false;
      message.textContent = body && body.message ? body.message : "Upload failed (HTTP " + xhr.status + ").";
      if (xhr.status === 503 || xhr.status === 502 || xhr.status === 504) {
        message.textContent += " Press Upload again in a few seconds: a repeated upload is never counted twice.";
      }
      if (body) { showProblems(body.problems, body.total_problems || 0); }
    });
    xhr.addEventListener("error", function () {
      button.disabled = false;
      message.textContent = "The connection failed during the upload; press Upload again (a repeated upload is never counted twice).";
    });
    xhr.send(new FormData(form));
  });
}());
