// Live pages: while a region marked data-live holds something still in flight (an element
// marked data-open: a pending or retrying delivery), the page fetches itself again and swaps
// in the new regions, with back-off (1 s, then 1.5x, at most 15 s) until nothing is open, for
// at most 15 minutes, and not while the tab is hidden. Opened <details> stay open.
// A region also marked data-follow (an open delivery log's first page) picks up what is new:
// with nothing in flight the page is fetched every 5 s while the tab is visible, never while
// it is hidden (showing the tab fetches at once).
(function () {
  "use strict";

  var FIRST_DELAY = 1000, MAX_DELAY = 15000, GIVE_UP_AFTER = 15 * 60 * 1000;
  var FOLLOW_EVERY = 5000;
  var started = Date.now(), delay = FIRST_DELAY, timer = null;

  function inFlight(root) {
    return root.querySelector("[data-live][data-open], [data-live] [data-open]") !== null;
  }

  function following(root) {
    return root.querySelector("[data-live][data-follow]") !== null;
  }

  function openDetails(region) {
    var opened = [];
    region.querySelectorAll("details").forEach(function (details, index) {
      if (details.open) opened.push(index);
    });
    return opened;
  }

  function swap(fresh) {
    document.querySelectorAll("[data-live]").forEach(function (region) {
      var replacement = fresh.querySelector('[data-live="' + region.dataset.live + '"]');
      if (!replacement) return;
      var opened = openDetails(region);
      var node = document.importNode(replacement, true);
      var details = node.querySelectorAll("details");
      opened.forEach(function (index) { if (details[index]) details[index].open = true; });
      region.replaceWith(node);
    });
  }

  function schedule() {
    clearTimeout(timer);
    if (document.hidden) return;
    if (inFlight(document) && Date.now() - started <= GIVE_UP_AFTER) {
      timer = setTimeout(poll, following(document) ? Math.min(delay, FOLLOW_EVERY) : delay);
    } else if (following(document)) {
      timer = setTimeout(poll, FOLLOW_EVERY);
    }
  }

  function poll() {
    if (document.hidden) return;  // visibilitychange polls again when the tab is shown
    fetch(window.location.href, { credentials: "same-origin", headers: { "X-Live": "1" } })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      })
      .then(function (html) {
        swap(new DOMParser().parseFromString(html, "text/html"));
        delay = Math.min(delay * 1.5, MAX_DELAY);
        schedule();
      })
      .catch(function () {
        delay = Math.min(delay * 2, MAX_DELAY);
        schedule();
      });
  }

  document.addEventListener("visibilitychange", function () {
    if (document.hidden) { clearTimeout(timer); return; }
    delay = FIRST_DELAY;
    if (following(document)) poll(); else schedule();
  });
  schedule();
})();
