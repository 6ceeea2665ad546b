// Refresh the page's <main> every 5 s from its data-refresh fragment URL, without a
// full reload. Tables work without it; failures keep the last content.
(function () {
  "use strict";
  var PERIOD_MS = 5000;
  function refresh(main) {
    var url = main.getAttribute("data-refresh");
    fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.text();
      })
      .then(function (html) {
        var parsed = new DOMParser().parseFromString("<main>" + html + "</main>", "text/html");
        var fresh = parsed.querySelector("main");
        if (fresh) { main.replaceChildren.apply(main, Array.prototype.slice.call(fresh.childNodes)); }
      })
      .catch(function () { /* keep what is shown; try again next time */ });
  }
  document.addEventListener("DOMContentLoaded", function () {
    var main = document.querySelector("main[data-refresh]");
    if (main) { setInterval(function () { refresh(main); }, PERIOD_MS); }
  });
})();
