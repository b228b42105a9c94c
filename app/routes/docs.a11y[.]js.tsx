// Repairs Swagger UI's markup for assistive technology as it renders (a file: the CSP forbids inline scripts).
const SCRIPT = `(function () {
  var root = document.getElementById("swagger-ui");
  if (!root || !window.MutationObserver) return;
  function fix() {
    // The server picker has no label.
    var servers = document.getElementById("servers");
    if (servers && !servers.getAttribute("aria-label")) servers.setAttribute("aria-label", "Server");
    // An operation's summary is a button with the path's deep link inside it: nested controls. The button stays.
    var links = root.querySelectorAll(".opblock-summary-control a[href]");
    for (var i = 0; i < links.length; i++) links[i].removeAttribute("href");
  }
  new MutationObserver(fix).observe(root, { childList: true, subtree: true });
  fix();
})();
`;

export const loader = () => new Response(SCRIPT, { headers: { "Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "public, max-age=3600" } });
