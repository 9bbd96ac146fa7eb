// Upload with a progress bar (XMLHttpRequest upload events), then go to "my submissions".
// Before sending, the browser checks what it can: the file's size against the limit and, for a
// plain JSONL file, that every line is a JSON object with an "id" (a UTF-8 BOM is fine), listing
// every problem found (the first 50 with line and field, and the total), as the server does.
// Errors are shown as errors (red box, red bar). Without JavaScript the form still posts.
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

  function fail(text) {
    message.textContent = text;
    message.className = "error-box";
    bar.classList.add("failed");
  }

  // Like the server and the command line: every problem is counted, the first 50 are listed
  // with their line and field.
  var MAX_SHOWN = 50;

  function precheck(file, done) {
    var maxBytes = parseInt(form.getAttribute("data-max-bytes") || "0", 10);
    var kind = form.querySelector("input[name=kind]:checked");
    var isImage = kind && kind.value === "container";
    function one(text) { done([{ line: null, field: "file", message: text }], 1); }
    if (!isImage && maxBytes && file.size > maxBytes) {
      one("the file is " + (file.size / 1048576).toFixed(1) + " MB, over the " +
          Math.round(maxBytes / 1048576) + " MB limit: gzip it (the server reads .jsonl.gz).");
      return;
    }
    if (file.size === 0) { one("the file is empty."); return; }
    if (isImage || !window.FileReader || !window.TextDecoder) { done([], 0); return; }
    var reader = new FileReader();
    reader.onload = function () {
      var bytes = new Uint8Array(reader.result);
      if (bytes[0] === 0x1f && bytes[1] === 0x8b) { done([], 0); return; }  // gzip: the server checks
      if (bytes[0] === 0x50 && bytes[1] === 0x4b) { done([], 0); return; }  // a ZIP (TriDF)
      var lines = new TextDecoder("utf-8").decode(bytes).replace(/^\uFEFF/, "").split("\n");
      var problems = [], total = 0, seen = false;
      for (var i = 0; i < lines.length; i++) {
        var line = lines[i].trim();
        if (!line) { continue; }
        if (!seen && (line === "{" || line === "[")) { done([], 0); return; }  // one document
        seen = true;
        var found = null, field = null, row;
        try { row = JSON.parse(line); } catch (err) { row = undefined; }
        if (row === undefined) {
          found = "not valid JSON: each line must be one JSON object such as {\"id\": \"...\", ...}";
        } else if (row === null || typeof row !== "object" || Array.isArray(row)) {
          found = "not a JSON object";
        } else if (typeof row.id !== "string" && !("responses" in row)) {
          field = "id"; found = "required, must be a string item id";
        }
        if (found) {
          total += 1;
          if (problems.length < MAX_SHOWN) { problems.push({ line: i + 1, field: field, message: found }); }
        }
      }
      done(problems, total);
    };
    reader.onerror = function () { done([], 0); };
    reader.readAsArrayBuffer(file);  // at most the upload limit (checked above)
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
    message.className = "";
    bar.classList.remove("failed");
    var input = document.getElementById("file");
    var file = input && input.files && input.files[0];
    if (!file) { fail("Choose a file first."); return; }
    precheck(file, function (problems, total) {
      if (total) {
        bar.hidden = true;
        fail(total === 1 ? "1 problem in the file; nothing was uploaded."
             : total + " problems in the file" + (total > problems.length ? " (the first " +
               problems.length + " below)" : "") + "; nothing was uploaded.");
        showProblems(problems, total);
        return;
      }
      showProblems([], 0);
      preflight(function (refusal, body) {
        if (refusal) {
          bar.hidden = true;
          fail(refusal + " Nothing was uploaded.");
          if (body) { showProblems(body.problems, body.total_problems || 0); }
          return;
        }
        send();
      });
    });
  });

  // Ask the server whether this target (benchmark, split, challenge, kind) takes an upload now,
  // before sending a byte of the file: a closed phase or a wrong split is refused at once.
  function preflight(done) {
    var url = form.getAttribute("data-check-url");
    if (!url) { done(null); return; }
    var params = ["benchmark", "split", "challenge"].map(function (name) {
      var field = form.querySelector("[name=" + name + "]");
      return field && field.value ? name + "=" + encodeURIComponent(field.value) : "";
    });
    var kind = form.querySelector("input[name=kind]:checked");
    if (kind) { params.push("kind=" + encodeURIComponent(kind.value)); }
    var xhr = new XMLHttpRequest();
    xhr.open("GET", url + "?" + params.filter(Boolean).join("&"));
    xhr.setRequestHeader("Accept", "application/json");
    message.textContent = "Checking…";
    xhr.addEventListener("load", function () {
      if (xhr.status === 200) { done(null); return; }
      var body = null;
      try { body = JSON.parse(xhr.responseText); } catch (err) { body = null; }
      if (xhr.status >= 500 || !body) { done(null); return; }  // the upload itself will tell
      done(body.message || "Refused (HTTP " + xhr.status + ").", body);
    });
    xhr.addEventListener("error", function () { done(null); });
    xhr.send();
  }

  function send() {
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
      var text = body && body.message ? body.message : "Upload failed (HTTP " + xhr.status + ").";
      if (xhr.status === 503 || xhr.status === 502 || xhr.status === 504) {
        text += " Press Upload again in a few seconds: a repeated upload is never counted twice.";
      }
      fail(text);
      if (body) { showProblems(body.problems, body.total_problems || 0); }
    });
    xhr.addEventListener("error", function () {
      button.disabled = false;
      fail("The connection failed during the upload; press Upload again (a repeated upload is never counted twice).");
    });
    xhr.send(new FormData(form));
  }
}());
