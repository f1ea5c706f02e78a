// Draws plotly figures that telemetry fragments carry as JSON (<script type="application/json">),
// loading plotly.js from static the first time a chart appears. No inline scripts (CSP 'self').
(function () {
  "use strict";
  if (window.claimscopeTelemetry) return;
  window.claimscopeTelemetry = true;
  var loading = null;

  function plotly(src) {
    if (window.Plotly) return Promise.resolve(window.Plotly);
    if (!loading) {
      loading = new Promise(function (resolve, reject) {
        var s = document.createElement("script");
        s.src = src;
        s.onload = function () { resolve(window.Plotly); };
        s.onerror = reject;
        document.head.appendChild(s);
      });
    }
    return loading;
  }

  function draw(root) {
    (root || document).querySelectorAll(".plotly-chart[data-figure]:not([data-drawn])").forEach(function (el) {
      var data = document.getElementById(el.getAttribute("data-figure"));
      if (!data) return;
      el.setAttribute("data-drawn", "1");
      var fig = JSON.parse(data.textContent);
      plotly(el.getAttribute("data-plotly-src")).then(function (P) {
        P.newPlot(el, fig.data, fig.layout, { responsive: true, displaylogo: false });
      });
    });
  }

  document.addEventListener("htmx:afterSettle", function (e) { draw(e.target); });
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { draw(document); });
  } else {
    draw(document);
  }
})();
