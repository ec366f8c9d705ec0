/* Zoom and pan for the drawings of the UI (the pipeline DAG), by mouse and keyboard.
   A drawing opens fitted to its box, never smaller than a legible size (its 12 px text at
   11 px or more): a larger one opens at its left edge and is panned. Drag or the arrow keys
   pan; Ctrl/Cmd + wheel, the + and - keys or the buttons zoom; 0 or Fit fits again. The view
   survives the drawing's live refreshes (htmx swaps the drawing, not its box). */
(function () {
  "use strict";
  // LEGIBLE is a hair above 11 px: the browser lays a box out at fractional pixels and a
  // drawing fitted at exactly 11 px came out at 10.9997.
  var TEXT = 12, LEGIBLE = 11.05, MOST = 2.5, STEP = 1.25, MOVE = 60;
  var views = {};  // box id -> {x, y, scale}

  function natural(svg) {
    var box = svg.viewBox.baseVal;
    return {w: box.width, h: box.height};
  }

  // As high as the drawing at the width's scale, within what the page can give. The height
  // is the drawing's own attribute: a style attribute would be refused by the page's CSP when
  // htmx settles a refreshed box.
  function height(box, svg) {
    var size = natural(svg), least = LEGIBLE / TEXT;
    var scale = Math.max(Math.min(box.clientWidth / size.w, 1.25), least);
    return Math.min(size.h * scale + 16, Math.max(window.innerHeight * 0.7, 240));
  }

  function fitted(box, svg) {
    var size = natural(svg), least = LEGIBLE / TEXT, high = height(box, svg);
    var scale = Math.min(box.clientWidth / size.w, high / size.h, 1.25);
    scale = Math.max(scale, least);
    var wide = size.w * scale, tall = size.h * scale;
    return {
      x: wide < box.clientWidth ? -(box.clientWidth - wide) / 2 / scale : 0,
      y: tall < high ? -(high - tall) / 2 / scale : 0,
      scale: scale,
      height: high
    };
  }

  function show(box, svg, view) {
    views[box.id] = view;
    svg.setAttribute("width", box.clientWidth);
    svg.setAttribute("height", view.height);
    svg.setAttribute("viewBox", [view.x, view.y, box.clientWidth / view.scale,
      view.height / view.scale].join(" "));
    box.setAttribute("data-scale", view.scale.toFixed(3));
  }

  function zoom(box, svg, factor, atX, atY) {
    var view = views[box.id];
    var scale = Math.min(Math.max(view.scale * factor, 0.2), MOST);
    var px = atX === undefined ? box.clientWidth / 2 : atX;
    var py = atY === undefined ? view.height / 2 : atY;
    show(box, svg, {
      x: view.x + px / view.scale - px / scale,
      y: view.y + py / view.scale - py / scale,
      scale: scale,
      height: view.height
    });
  }

  function pan(box, svg, dx, dy) {
    var view = views[box.id];
    show(box, svg, {
      x: view.x - dx / view.scale, y: view.y - dy / view.scale, scale: view.scale, height: view.height
    });
  }

  function setUp(box) {
    var svg = box.querySelector("svg.etl-drawing");
    if (!svg || svg.getAttribute("data-zoomable")) return;
    svg.setAttribute("data-zoomable", "yes");
    show(box, svg, views[box.id] || fitted(box, svg));
  }

  function wire(box) {
    var start = null, moved = false;
    box.addEventListener("pointerdown", function (e) {
      start = {x: e.clientX, y: e.clientY}; moved = false;
    });
    box.addEventListener("pointermove", function (e) {
      if (!start) return;
      var dx = e.clientX - start.x, dy = e.clientY - start.y;
      if (!moved && Math.abs(dx) + Math.abs(dy) < 4) return;
      moved = true;
      pan(box, box.querySelector("svg.etl-drawing"), dx, dy);
      start = {x: e.clientX, y: e.clientY};
    });
    box.addEventListener("pointerup", function () { start = null; });
    box.addEventListener("pointerleave", function () { start = null; });
    box.addEventListener("click", function (e) {
      if (moved) { e.preventDefault(); e.stopPropagation(); moved = false; return; }
      // A click anywhere on a node follows the node's own link.
      var node = e.target.closest && e.target.closest("g.node");
      var link = node && node.querySelector("a[href]");
      if (link && !e.target.closest("a")) window.location.assign(link.getAttribute("href"));
    }, true);
    box.addEventListener("wheel", function (e) {
      if (!(e.ctrlKey || e.metaKey)) return;
      e.preventDefault();
      var at = box.getBoundingClientRect();
      zoom(box, box.querySelector("svg.etl-drawing"), e.deltaY < 0 ? STEP : 1 / STEP,
        e.clientX - at.left, e.clientY - at.top);
    }, {passive: false});
    box.addEventListener("keydown", function (e) {
      var svg = box.querySelector("svg.etl-drawing");
      var acts = {
        "+": function () { zoom(box, svg, STEP); }, "=": function () { zoom(box, svg, STEP); },
        "-": function () { zoom(box, svg, 1 / STEP); },
        "0": function () { show(box, svg, fitted(box, svg)); },
        ArrowLeft: function () { pan(box, svg, MOVE, 0); },
        ArrowRight: function () { pan(box, svg, -MOVE, 0); },
        ArrowUp: function () { pan(box, svg, 0, MOVE); },
        ArrowDown: function () { pan(box, svg, 0, -MOVE); }
      };
      if (e.target !== box || !acts[e.key]) return;
      e.preventDefault();
      acts[e.key]();
    });
  }

  function controls(root) {
    root.querySelectorAll("[data-zoom]").forEach(function (button) {
      if (button.getAttribute("data-wired")) return;
      button.setAttribute("data-wired", "yes");
      button.addEventListener("click", function () {
        var box = document.getElementById(button.getAttribute("aria-controls"));
        var svg = box.querySelector("svg.etl-drawing");
        var how = button.getAttribute("data-zoom");
        if (how === "fit") show(box, svg, fitted(box, svg));
        else zoom(box, svg, how === "in" ? STEP : 1 / STEP);
      });
    });
  }

  function start(root) {
    root.querySelectorAll(".zoom-box").forEach(function (box) {
      if (!box.getAttribute("data-wired")) { box.setAttribute("data-wired", "yes"); wire(box); }
      setUp(box);
    });
    controls(root);
  }

  document.addEventListener("DOMContentLoaded", function () { start(document); });
  document.addEventListener("htmx:load", function (e) { start(document); });
}());
