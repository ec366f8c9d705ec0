/* Live by push. Where the server tells of the Engine DB's changes (the body's data-events: a
   PostgreSQL Engine DB), this script follows its event stream and fires "etl-craft:changed" on
   every live part (their hx-trigger listens for it), so they refresh when something changes
   rather than on a timer. A burst of changes (a run and its tasks ending together) is one
   refresh, and refreshes come a second apart at most: an Engine DB shared by busy projects
   tells of all their changes. The stream's first event, "listening", asks for a refresh too:
   what changed between the page's rendering (or the stream's last break) and then was told to
   no one. While the stream is down it fires the event every 2 s, the pace of a page without
   push. */
(function () {
  "use strict";
  var KINDS = ["run", "task-run", "attempt", "worker", "wake-up"];
  var SETTLE_MS = 100, GAP_MS = 1000, POLL_MS = 2000;
  var pending = null, poller = null, last = 0;

  function refresh() {
    pending = null;
    last = Date.now();
    document.querySelectorAll('[hx-trigger*="etl-craft:changed"]').forEach(function (part) {
      htmx.trigger(part, "etl-craft:changed");
    });
  }

  function changed() {
    if (pending === null) {
      pending = setTimeout(refresh, Math.max(SETTLE_MS, last + GAP_MS - Date.now()));
    }
  }

  function follow(url) {
    var source = new EventSource(url);
    KINDS.forEach(function (kind) { source.addEventListener(kind, changed); });
    source.addEventListener("listening", function () {
      document.body.setAttribute("data-pushed", "true");
      if (poller !== null) clearInterval(poller);
      poller = null;
      changed();
    });
    source.addEventListener("error", function () {
      document.body.setAttribute("data-pushed", "false");
      if (poller === null) poller = setInterval(refresh, POLL_MS);
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var url = document.body.getAttribute("data-events");
    if (url && window.EventSource) follow(url);
  });
})();
