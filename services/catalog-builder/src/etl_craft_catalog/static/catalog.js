/* The catalog's only script: search, the stale-data warning, lineage depth and path tracing.
   It loads nothing: the search index is a script the page includes before this one. */
(function () {
  "use strict";
  var DAY = 24 * 60 * 60 * 1000;
  var body = document.body;
  var root = body.getAttribute("data-root") || "";

  function warnWhenStale() {
    var built = Date.parse(body.getAttribute("data-built"));
    if (isNaN(built)) return;
    var age = Date.now() - built;
    var hours = Math.floor(age / 3600000);
    var shown = document.getElementById("age");
    if (shown) shown.textContent = hours < 1 ? "Under an hour ago." : hours + " hours ago.";
    if (age > DAY) document.getElementById("stale").hidden = false;
  }

  /* Fuzzy: every character of the query in order; closer together and earlier scores higher. */
  function score(query, text) {
    text = text.toLowerCase();
    var at = text.indexOf(query);
    if (at >= 0) return 1000 - at - (text.length - query.length) / 10;
    var total = 0, position = -1, gap = 0;
    for (var i = 0; i < query.length; i++) {
      var found = text.indexOf(query[i], position + 1);
      if (found < 0) return -1;
      gap += found - position - 1;
      position = found;
    }
    total = 500 - gap * 5 - text.length / 10;
    return total;
  }

  function search() {
    var box = document.getElementById("search-box");
    if (!box) return;
    var results = document.getElementById("search-results");
    var filters = document.querySelectorAll("#search-filters input");
    var params = new URLSearchParams(window.location.search);
    box.value = params.get("q") || "";
    function allowed() {
      var kinds = {};
      filters.forEach(function (f) { if (f.checked) kinds[f.value] = true; });
      return kinds;
    }
    function run() {
      var query = box.value.trim().toLowerCase();
      results.innerHTML = "";
      if (!query) return;
      var kinds = allowed();
      var hits = [];
      (window.CATALOG_INDEX || []).forEach(function (entry) {
        if (!kinds[entry.type]) return;
        var best = Math.max(score(query, entry.name), score(query, entry.text) - 300);
        if (best > 0) hits.push([best, entry]);
      });
      hits.sort(function (a, b) { return b[0] - a[0] || (a[1].name < b[1].name ? -1 : 1); });
      hits.slice(0, 50).forEach(function (hit) {
        var entry = hit[1];
        var item = document.createElement("li");
        var link = document.createElement("a");
        link.href = root + entry.url;
        link.textContent = entry.name;
        var kind = document.createElement("span");
        kind.className = "kind kind-" + entry.type;
        kind.textContent = entry.type;
        item.appendChild(kind);
        item.appendChild(link);
        if (entry.text) {
          var text = document.createElement("span");
          text.className = "text";
          text.textContent = entry.text;
          item.appendChild(text);
        }
        results.appendChild(item);
      });
      if (!hits.length) results.innerHTML = '<li class="none">Nothing matches.</li>';
    }
    box.addEventListener("input", run);
    filters.forEach(function (f) { f.addEventListener("change", run); });
    run();
  }

  function visibleGraph() {
    return document.querySelector(".graph-box.lineage:not([hidden]) svg");
  }

  function clearTrace(svg) {
    svg.classList.remove("tracing");
    svg.querySelectorAll(".highlight").forEach(function (e) { e.classList.remove("highlight"); });
  }

  /* Walk the edges both ways from one port: everything upstream and everything downstream. */
  function trace(id) {
    var svg = visibleGraph();
    if (!svg) return;
    clearTrace(svg);
    var edges = Array.prototype.slice.call(svg.querySelectorAll("path.edge"));
    var reached = {};
    reached[id] = true;
    [["data-target", "data-source"], ["data-source", "data-target"]].forEach(function (way) {
      var frontier = [id], seen = {};
      seen[id] = true;
      while (frontier.length) {
        var next = [];
        edges.forEach(function (edge) {
          if (frontier.indexOf(edge.getAttribute(way[0])) < 0) return;
          edge.classList.add("highlight");
          var end = edge.getAttribute(way[1]);
          if (!seen[end]) { seen[end] = true; reached[end] = true; next.push(end); }
        });
        frontier = next;
      }
    });
    svg.querySelectorAll("[data-id]").forEach(function (element) {
      if (reached[element.getAttribute("data-id")]) element.classList.add("highlight");
    });
    svg.classList.add("tracing");
    reveal(svg.querySelector('.port[data-id="' + id + '"]'));
  }

  /* Scroll a graph's box (not the page) so that an element of its SVG is in view. */
  function reveal(element) {
    if (!element) return;
    var box = element.closest(".graph-box");
    var at = element.getBoundingClientRect(), frame = box.getBoundingClientRect();
    box.scrollLeft += at.left - frame.left - (frame.width - at.width) / 2;
    box.scrollTop += at.top - frame.top - (frame.height - at.height) / 2;
  }

  function lineage() {
    var buttons = document.querySelectorAll(".depth-button");
    buttons.forEach(function (button) {
      button.addEventListener("click", function () {
        var depth = button.getAttribute("data-depth");
        document.querySelectorAll(".graph-box.lineage").forEach(function (box) {
          box.hidden = box.getAttribute("data-depth") !== depth;
        });
        buttons.forEach(function (b) { b.classList.toggle("current", b === button); });
        var svg = visibleGraph();
        if (svg) reveal(svg.querySelector(".node.focus"));
      });
    });
    document.querySelectorAll(".graph-box.lineage").forEach(function (box) {
      box.addEventListener("click", function (event) {
        var port = event.target.closest(".port");
        if (!port || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
        event.preventDefault();
        trace(port.getAttribute("data-id"));
      });
    });
    document.querySelectorAll("button.trace").forEach(function (button) {
      button.addEventListener("click", function () { trace(button.getAttribute("data-port")); });
    });
    var clear = document.getElementById("clear-trace");
    if (clear) clear.addEventListener("click", function () {
      var svg = visibleGraph();
      if (svg) clearTrace(svg);
    });
    var first = visibleGraph();
    if (first) reveal(first.querySelector(".node.focus"));
    var hash = decodeURIComponent(window.location.hash || "");
    if (hash.indexOf("#col-") === 0) {
      var row = document.getElementById(hash.slice(1));
      var button = row && row.querySelector("button.trace");
      if (button) button.click();
    }
  }

  warnWhenStale();
  search();
  lineage();
})();
