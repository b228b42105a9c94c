// Starts Swagger UI on the API reference page (a file, because the CSP forbids inline scripts).
window.addEventListener("load", function () {
  var el = document.getElementById("swagger-ui");
  if (!el || typeof window.SwaggerUIBundle !== "function") return;
  window.ui = window.SwaggerUIBundle({
    url: el.getAttribute("data-url"),
    domNode: el,
    deepLinking: true,
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
