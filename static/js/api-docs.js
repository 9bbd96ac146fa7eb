// Starts Swagger UI (loaded from the server's own copy of the swagger-ui bundle) on the
// OpenAPI document named by #swagger-ui's data-spec-url. A file, not an inline script: CSP-safe.
(function () {
  "use strict";
  function start() {
    var box = document.getElementById("swagger-ui");
    if (!box || typeof window.SwaggerUIBundle !== "function") { return; }
    window.SwaggerUIBundle({
      url: box.getAttribute("data-spec-url"),
      domNode: box,
      deepLinking: true,
      defaultModelsExpandDepth: 0,
      tryItOutEnabled: false
    });
  }
  if (document.readyState === "complete") { start(); }
  else { window.addEventListener("load", start); }
}());
