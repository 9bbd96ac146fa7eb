// Small behaviours shared by every page (no library, no inline script: CSP-safe).
// * forms with data-confirm ask before a destructive action is sent;
// * <time class="countdown" datetime="..."> counts down to a UTC instant;
// * a wide table inside .table-scroll shows its "scroll sideways" hint only when it overflows.
(function () {
  "use strict";
  function onReady(fn) {
    if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", fn); }
    else { fn(); }
  }

  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    var question = form.getAttribute && form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) { ev.preventDefault(); }
  }, true);

  function pad(n) { return n < 10 ? "0" + n : String(n); }
  function renderCountdown(el) {
    var target = Date.parse(el.getAttribute("datetime"));
    if (isNaN(target)) { return; }
    var s = Math.round((target - Date.now()) / 1000);
    if (s <= 0) { el.textContent = el.getAttribute("data-done") || "now"; return; }
    var d = Math.floor(s / 86400); s -= d * 86400;
    var h = Math.floor(s / 3600); s -= h * 3600;
    var m = Math.floor(s / 60); s -= m * 60;
    el.textContent = (d ? d + "d " : "") + pad(h) + ":" + pad(m) + ":" + pad(s);
  }
  function tick() {
    Array.prototype.forEach.call(document.querySelectorAll("time.countdown"), renderCountdown);
  }

  // the header's Menu button on a phone (site.css shows it under 641 px)
  function headerMenu() {
    var header = document.querySelector(".site-header");
    var button = header && header.querySelector(".menu-toggle");
    if (!button) { return; }
    header.classList.add("has-menu");
    button.hidden = false;
    button.addEventListener("click", function () {
      var open = header.classList.toggle("open");
      button.setAttribute("aria-expanded", open ? "true" : "false");
    });
  }

  function scrollHints() {
    Array.prototype.forEach.call(document.querySelectorAll(".table-scroll"), function (box) {
      var hint = box.nextElementSibling;
      if (hint && hint.classList.contains("scroll-hint")) {
        hint.classList.toggle("shown", box.scrollWidth > box.clientWidth + 2);
      }
    });
  }

  onReady(function () {
    tick();
    headerMenu();
    if (document.querySelector("time.countdown")) { window.setInterval(tick, 1000); }
    scrollHints();
    window.addEventListener("resize", scrollHints);
  });
}());
