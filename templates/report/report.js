/* The report's script: sorting, CSV downloads, selecting a diagram node, timeline pan and zoom.
   Everything works on the page as written; without this script the tables and SVG stay readable. */
(function () {
  "use strict";

  function cellValue(row, index, numeric) {
    var cell = row.cells[index];
    var raw = cell ? cell.getAttribute("data-v") : "";
    if (numeric) {
      var number = parseFloat(raw);
      return isNaN(number) ? -Infinity : number;
    }
    return (raw || "").toLowerCase();
  }

  function sortTable(table, index, numeric, header) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var descending = header.getAttribute("aria-sort") !== "descending";
    rows.sort(function (a, b) {
      var x = cellValue(a, index, numeric), y = cellValue(b, index, numeric);
      if (x < y) { return descending ? 1 : -1; }
      if (x > y) { return descending ? -1 : 1; }
      return 0;
    });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) { th.setAttribute("aria-sort", "none"); });
    header.setAttribute("aria-sort", descending ? "descending" : "ascending");
    rows.forEach(function (row) { body.appendChild(row); });
  }

  function csvField(text) {
    return /[",\n]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
  }

  function tableCsv(table) {
    var lines = [];
    var head = Array.prototype.map.call(table.tHead.rows[0].cells, function (th) {
      return csvField(th.getAttribute("data-col") || th.textContent.trim());
    });
    lines.push(head.join(","));
    Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
      lines.push(Array.prototype.map.call(row.cells, function (td) { return csvField(td.getAttribute("data-v") || ""); }).join(","));
    });
    return lines.join("\n") + "\n";
  }

  function download(name, text) {
    var blob = new Blob([text], { type: "text/csv;charset=utf-8" });
    var link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = name;
    document.body.appendChild(link);
    link.click();
    setTimeout(function () { URL.revokeObjectURL(link.href); link.remove(); }, 0);
  }

  document.querySelectorAll("table.data").forEach(function (table) {
    table.querySelectorAll("button.sort").forEach(function (button) {
      button.addEventListener("click", function () {
        sortTable(table, parseInt(button.getAttribute("data-index"), 10), button.getAttribute("data-numeric") === "y", button.parentNode);
      });
    });
  });

  document.querySelectorAll("button.csv").forEach(function (button) {
    button.addEventListener("click", function () {
      var key = button.getAttribute("data-table");
      var full = document.getElementById("csv-" + key);
      var text = full ? full.textContent.replace(/^\s+/, "") : tableCsv(document.getElementById("table-" + key));
      download(button.getAttribute("data-file"), text);
    });
  });

  /* A node of the diagram shows its row of the element table. */
  var details = document.getElementById("node-details");
  document.querySelectorAll("a.node-link").forEach(function (link) {
    link.addEventListener("click", function (event) {
      var row = document.getElementById(link.getAttribute("data-row"));
      if (!row) { return; }
      event.preventDefault();
      document.querySelectorAll("tr.selected").forEach(function (r) { r.classList.remove("selected"); });
      row.classList.add("selected");
      row.scrollIntoView({ block: "center" });
      if (details) {
        var title = link.querySelector("title");
        details.textContent = title ? title.textContent : "";
      }
      if (history.replaceState) { history.replaceState(null, "", "#" + row.id); }
    });
  });

  /* A chart's point or bar, hovered or focused, says its value in words. */
  var chartDetails = document.getElementById("chart-details");
  document.querySelectorAll(".tip").forEach(function (shape) {
    function tell() {
      var title = shape.querySelector("title");
      if (chartDetails && title) { chartDetails.textContent = title.textContent; }
    }
    shape.addEventListener("focus", tell);
    shape.addEventListener("mouseover", tell);
  });

  /* Timeline: zoom and pan change the horizontal part of the view box. */
  var plot = document.getElementById("timeline-svg");
  if (plot) {
    var axis = document.getElementById("timeline-axis");
    var ticks = document.getElementById("timeline-ticks");
    var wrap = plot.parentNode;
    var box = plot.viewBox.baseVal;
    var full = box.width, height = box.height;
    var span = parseFloat(plot.getAttribute("data-span")) || 1;
    var view = { x: 0, w: full };
    var tickSpans = ticks ? Array.prototype.slice.call(ticks.children) : [];
    var timelineDetails = document.getElementById("timeline-details");

    function niceStep(raw) {
      var power = Math.pow(10, Math.floor(Math.log10(raw)));
      var steps = [1, 2, 2.5, 5, 10];
      for (var i = 0; i < steps.length; i++) { if (steps[i] * power >= raw) { return steps[i] * power; } }
      return 10 * power;
    }
    function showTime(seconds) {
      var units = [["s", 1], ["ms", 1e-3], ["us", 1e-6], ["ns", 1e-9]];
      if (seconds === 0) { return "0"; }
      for (var i = 0; i < units.length; i++) {
        if (Math.abs(seconds) >= units[i][1] || i === units.length - 1) {
          return parseFloat((seconds / units[i][1]).toPrecision(4)) + " " + units[i][0];
        }
      }
      return String(seconds);
    }
    function redraw() {
      view.w = Math.min(full, Math.max(full / 100000, view.w));
      view.x = Math.min(full - view.w, Math.max(0, view.x));
      plot.setAttribute("viewBox", view.x + " 0 " + view.w + " " + height);
      if (axis) { axis.setAttribute("viewBox", view.x + " 0 " + view.w + " 20"); }
      if (!ticks) { return; }
      var start = view.x / full * span, stop = (view.x + view.w) / full * span;
      var step = niceStep((stop - start) / 8);
      var first = Math.ceil(start / step) * step;
      var labels = [];
      for (var t = first; t <= stop + step * 1e-9 && labels.length < 12; t += step) { labels.push(t); }
      ticks.textContent = "";
      labels.forEach(function (value) {
        var span_ = document.createElement("span");
        span_.style.left = ((value - start) / (stop - start) * 100) + "%";
        span_.textContent = showTime(value);
        ticks.appendChild(span_);
      });
      if (axis) {
        while (axis.firstChild) { axis.removeChild(axis.firstChild); }
        labels.forEach(function (value) {
          var line = document.createElementNS("http://www.w3.org/2000/svg", "line");
          var x = value / span * full;
          line.setAttribute("x1", x); line.setAttribute("x2", x); line.setAttribute("y1", 0); line.setAttribute("y2", 5);
          line.setAttribute("stroke", "#333"); line.setAttribute("vector-effect", "non-scaling-stroke");
          axis.appendChild(line);
        });
      }
    }
    function zoom(factor, centre) {
      var at = centre === undefined ? view.x + view.w / 2 : centre;
      var share = (at - view.x) / view.w;
      view.w = view.w * factor;
      view.x = at - share * view.w;
      redraw();
    }
    function pan(share) { view.x += share * view.w; redraw(); }
    document.querySelectorAll("[data-zoom]").forEach(function (button) {
      button.addEventListener("click", function () {
        var what = button.getAttribute("data-zoom");
        if (what === "in") { zoom(0.5); }
        else if (what === "out") { zoom(2); }
        else if (what === "left") { pan(-0.25); }
        else if (what === "right") { pan(0.25); }
        else { view.x = 0; view.w = full; redraw(); }
      });
    });
    var focusable = wrap.parentNode;
    /* The keyboard's way to a bar: up and down step through them (by track, then time) and the
       details line says the one reached, as hovering does; the view pans to keep it in sight. */
    var bars = plot.querySelectorAll("rect");
    var current = -1;
    function reach(index) {
      if (!bars.length) { return; }
      if (current >= 0) { bars[current].classList.remove("current"); }
      current = Math.max(0, Math.min(bars.length - 1, index));
      var bar = bars[current];
      bar.classList.add("current");
      var title = bar.querySelector("title");
      if (title && timelineDetails) { timelineDetails.textContent = title.textContent; }
      var x = parseFloat(bar.getAttribute("x")), w = parseFloat(bar.getAttribute("width"));
      if (x + w < view.x || x > view.x + view.w) { view.x = x + w / 2 - view.w / 2; redraw(); }
    }
    focusable.addEventListener("keydown", function (event) {
      var handled = true;
      if (event.key === "ArrowDown") { reach(current + 1); }
      else if (event.key === "ArrowUp") { reach(current < 0 ? 0 : current - 1); }
      else if (event.key === "+" || event.key === "=") { zoom(0.5); }
      else if (event.key === "-") { zoom(2); }
      else if (event.key === "ArrowLeft") { pan(-0.25); }
      else if (event.key === "ArrowRight") { pan(0.25); }
      else if (event.key === "0" || event.key === "Home") { view.x = 0; view.w = full; redraw(); }
      else { handled = false; }
      if (handled) { event.preventDefault(); }
    });
    wrap.addEventListener("wheel", function (event) {
      event.preventDefault();
      var rect = wrap.getBoundingClientRect();
      var at = view.x + (event.clientX - rect.left) / rect.width * view.w;
      zoom(event.deltaY > 0 ? 1.25 : 0.8, at);
    }, { passive: false });
    var drag = null;
    wrap.addEventListener("mousedown", function (event) { drag = { x: event.clientX, start: view.x }; });
    window.addEventListener("mouseup", function () { drag = null; });
    window.addEventListener("mousemove", function (event) {
      if (!drag) { return; }
      var rect = wrap.getBoundingClientRect();
      view.x = drag.start - (event.clientX - drag.x) / rect.width * view.w;
      redraw();
    });
    plot.addEventListener("mouseover", function (event) {
      var title = event.target.querySelector && event.target.querySelector("title");
      if (title && timelineDetails && event.target.tagName === "rect") { timelineDetails.textContent = title.textContent; }
    });
    if (tickSpans.length) { redraw(); }
  }
}());
