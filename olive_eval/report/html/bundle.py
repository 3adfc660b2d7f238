"""What makes the page self-contained: plotly's JavaScript inlined, compressed, and the page's own script and style.

Why compressed: plotly's bundled ``plotly.min.js`` is 4.8 MB, nearly the whole 5 MB the page may take. Gzipped
and base64-encoded it is about 2.0 MB; the page unpacks it with the browser's ``DecompressionStream('gzip')``
(Chrome 80, Firefox 113, Safari 16.4 and later) and runs it before drawing. Nothing is fetched: no CDN, no web
fonts, no MathJax (``typesetMath`` off, ``PlotlyConfig.MathJaxConfig`` local), no topojson (no maps are drawn).
A browser without ``DecompressionStream`` shows the tables and a line in place of each chart.
"""

from __future__ import annotations

import base64
import functools
import gzip

from olive_eval.errors import MissingDependencyError


@functools.cache
def plotly_gzip_base64() -> str:
    """plotly.js as gzip (level 6: level 9 saves 0.2% for 40% more time) in base64; built once per process."""
    try:
        import plotly.offline
    except ImportError:
        raise MissingDependencyError("plotly", "the HTML report", "report") from None
    code = plotly.offline.get_plotlyjs().encode("utf-8")
    return base64.b64encode(gzip.compress(code, compresslevel=6, mtime=0)).decode("ascii")


STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1200px;padding:0 1.5em 4em;
color:#222;line-height:1.4}
h1{margin-top:1em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
nav a{margin-right:1em}
.oe-table{border-collapse:collapse;margin:.5em 0 1em;font-size:.9em}
.oe-table th,.oe-table td{border:1px solid #ddd;padding:.3em .5em;vertical-align:top;text-align:left}
.oe-table th{background:#f4f4f4}
.oe-examples code{white-space:pre-wrap;word-break:break-word;font-size:.85em}
.oe-met{color:#1a7f37}.oe-miss{color:#c62828}.oe-base,.oe-ci{color:#666;font-size:.9em}
.oe-note{background:#fff8e1;border-left:4px solid #f9a825;padding:.3em .7em;margin:.4em 0}
.oe-caption{color:#555;margin:.2em 0}
.oe-chart{min-height:420px;margin:.5em 0 1.5em}
.oe-chart.oe-failed{min-height:0;color:#c62828}
.oe-pickers label{margin-right:1em}
pre{background:#f7f7f7;padding:.7em;overflow:auto;max-height:30em}
"""

#: Draws every ``.oe-chart`` from the figures JSON once plotly is unpacked; ``paretoFigure`` mirrors
#: :func:`olive_eval.report.html.fig_run.pareto_figure` for the metrics picked on the page.
SCRIPT = r"""
(function () {
  "use strict";
  var CONFIG = {displaylogo: false, responsive: true, showSendToCloud: false, showLink: false, typesetMath: false};
  function json(id) { return JSON.parse(document.getElementById(id).textContent); }
  function fail(message) {
    document.querySelectorAll(".oe-chart").forEach(function (el) {
      if (!el.dataset.drawn) { el.textContent = message; el.classList.add("oe-failed"); }
    });
  }
  async function loadPlotly() {
    var binary = atob(document.getElementById("oe-plotly-gz").textContent.trim());
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    var code = await new Response(stream).text();
    window.PlotlyConfig = {MathJaxConfig: "local"};
    var script = document.createElement("script");
    script.textContent = code;
    document.head.appendChild(script);
  }
  function front(xs, ys, hx, hy) {
    var pts = [];
    for (var i = 0; i < xs.length; i++) {
      if (xs[i] !== null && ys[i] !== null) pts.push([i, hx ? xs[i] : -xs[i], hy ? ys[i] : -ys[i]]);
    }
    var out = pts.filter(function (p) {
      return !pts.some(function (o) { return o[1] >= p[1] && o[2] >= p[2] && (o[1] > p[1] || o[2] > p[2]); });
    }).map(function (p) { return p[0]; });
    return out.sort(function (a, b) { return xs[a] - xs[b]; });
  }
  function bars(v, lo, hi) {
    return {type: "data", symmetric: false, visible: true,
      array: v.map(function (x, i) { return x === null || hi[i] === null ? null : hi[i] - x; }),
      arrayminus: v.map(function (x, i) { return x === null || lo[i] === null ? null : x - lo[i]; })};
  }
  function paretoFigure(d, xk, yk) {
    var sx = d.series[xk], sy = d.series[yk];
    var f = front(sx.values, sy.values, sx.higher, sy.higher);
    var points = {type: "scatter", mode: "markers+text", name: "models", x: sx.values, y: sy.values,
      text: d.models, textposition: "top center",
      marker: {size: 11, color: d.colours, symbol: d.models.map(function (_, i) { return f.indexOf(i) >= 0 ? "diamond" : "circle"; })},
      error_x: bars(sx.values, sx.lo, sx.hi), error_y: bars(sy.values, sy.lo, sy.hi),
      hovertemplate: "%{text}<br>x %{x}<br>y %{y}<extra></extra>"};
    var line = {type: "scatter", mode: "lines", name: "Pareto front", hoverinfo: "skip",
      x: f.map(function (i) { return sx.values[i]; }), y: f.map(function (i) { return sy.values[i]; }),
      line: {dash: "dot", color: "#444"}};
    var layout = JSON.parse(JSON.stringify(d.layout));
    layout.xaxis.title.text = sx.label;
    layout.yaxis.title.text = sy.label;
    return {data: [line, points], layout: layout};
  }
  async function main() {
    var figures = json("oe-figures");
    if (typeof DecompressionStream === "undefined") {
      fail("The charts need a browser with DecompressionStream (Chrome 80, Firefox 113, Safari 16.4 or later).");
      return;
    }
    await loadPlotly();
    var charts = document.querySelectorAll(".oe-chart");
    for (var i = 0; i < charts.length; i++) {
      var fig = figures[charts[i].id];
      if (!fig) continue;
      await Plotly.newPlot(charts[i], fig.data, fig.layout, CONFIG);
      charts[i].dataset.drawn = "true";
    }
    var data = document.getElementById("oe-pareto-data");
    if (data) {
      var d = JSON.parse(data.textContent);
      var px = document.getElementById("pareto-x"), py = document.getElementById("pareto-y");
      var redraw = function () {
        var fig = paretoFigure(d, px.value, py.value);
        Plotly.react(document.getElementById("pareto"), fig.data, fig.layout, CONFIG);
      };
      px.addEventListener("change", redraw);
      py.addEventListener("change", redraw);
    }
    document.body.dataset.chartsDrawn = "true";
  }
  main().catch(function (err) { fail("The charts could not be drawn: " + err); console.error(err); });
})();
"""
