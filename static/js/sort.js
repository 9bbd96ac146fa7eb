// Click-to-sort for tables with class "sortable" (no library, no inline script: CSP-safe).
// A header with data-sort="num" sorts by each cell's data-value as a number; data-sort="text"
// by data-value or text. data-better="higher" sorts descending on the first click. Empty
// values ("n/a") always go last, whichever the direction, as on the server.
(function () {
  "use strict";
  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) { return ""; }
    var v = cell.getAttribute("data-value");
    return v === null ? cell.textContent.trim() : v;
  }
  function sortBy(table, th, index) {
    var kind = th.getAttribute("data-sort");
    var current = th.getAttribute("aria-sort");
    var descending;
    if (current === "descending") { descending = false; }
    else if (current === "ascending") { descending = true; }
    else { descending = th.getAttribute("data-better") === "higher"; }
    Array.prototype.forEach.call(th.parentNode.cells, function (other) {
      other.removeAttribute("aria-sort");
    });
    th.setAttribute("aria-sort", descending ? "descending" : "ascending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (row, i) { row._pos = i; });
    rows.sort(function (a, b) {
      var x = cellValue(a, index), y = cellValue(b, index);
      if (x === "" || y === "") {
        if (x === y) { return a._pos - b._pos; }
        return x === "" ? 1 : -1;  // n/a last in both directions
      }
      var c;
      if (kind === "num") { c = parseFloat(x) - parseFloat(y); }
      else { c = x.localeCompare(y); }
      if (c === 0 || isNaN(c)) { return a._pos - b._pos; }  // stable
      return descending ? -c : c;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  function init() {
    var tables = document.querySelectorAll("table.sortable");
    Array.prototype.forEach.call(tables, function (table) {
      if (!table.tHead || !table.tBodies.length) { return; }
      var headers = table.tHead.rows[0].cells;
      Array.prototype.forEach.call(headers, function (th, index) {
        if (!th.hasAttribute("data-sort")) { return; }
        th.tabIndex = 0;
        th.classList.add("sort-header");
        th.addEventListener("click", function (ev) {
          if (ev.target.closest("a")) { return; }  // header links still navigate
          sortBy(table, th, index);
        });
        th.addEventListener("keydown", function (ev) {
          if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); sortBy(table, th, index); }
        });
      });
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
