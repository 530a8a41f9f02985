// The Logs tab's follow mode: poll the logs API for lines after the last cursor and append
// them (built with textContent: what integration code printed is never markup). Loaded from
// our origin (CSP); the API answers the signed-in member's session.
(function () {
  "use strict";

  var POLL_MS = 1500;

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function lineOf(item, ownerView) {
    var article = element("article", "log-line outcome-" + item.outcome);
    article.dataset.cursor = item.cursor;
    var header = element("header");
    var time = element("time", null, item.time.replace("T", " ").replace(/\.\d+/, "").replace("Z", ""));
    time.setAttribute("datetime", item.time);
    header.appendChild(time);
    header.appendChild(element("span", "badge kind", item.kind));
    header.appendChild(element("code", "what", item.event || item.request || "-"));
    if (item.test) {
      var badge = element("span", "badge test-event", "test");
      badge.title = "A sample event (trigger, Send test event), sent to this installation alone";
      header.appendChild(badge);
    }
    header.appendChild(element("span", "badge outcome", item.outcome));
    if (item.status) header.appendChild(element("span", "status", String(item.status)));
    if (item.durationMs !== null) header.appendChild(element("span", "duration", item.durationMs + " ms"));
    if (ownerView) header.appendChild(element("span", "installation muted small", item.installationId || "no installation"));
    header.appendChild(element("span", "version muted small", item.version ? "v" + item.version : ""));
    article.appendChild(header);
    if (item.output) article.appendChild(element("pre", "output", item.output));
    if (item.error) article.appendChild(element("pre", "error", item.error));
    return article;
  }

  function follow(box, toggle) {
    var ownerView = !!document.querySelector("select[name=installation]");
    var timer = null;

    function poll() {
      var query = new URLSearchParams();
      Object.keys(box.dataset).forEach(function (key) {
        if (key.indexOf("filter") === 0) query.set(key.slice(6).toLowerCase(), box.dataset[key]);
      });
      if (box.dataset.next) query.set("after", box.dataset.next);
      fetch(box.dataset.apiUrl + "?" + query.toString(), {
        credentials: "same-origin",
        headers: { Accept: "application/json" },
      })
        .then(function (response) {
          if (!response.ok) throw new Error(response.status);
          return response.json();
        })
        .then(function (page) {
          var empty = box.querySelector(".empty");
          if (page.items.length && empty) empty.remove();
          page.items.forEach(function (item) { box.appendChild(lineOf(item, ownerView)); });
          box.dataset.next = page.next;
          if (page.items.length) window.scrollTo(0, document.body.scrollHeight);
        })
        .catch(function () { /* try again at the next tick */ })
        .then(function () { if (toggle.checked) timer = setTimeout(poll, POLL_MS); });
    }

    toggle.addEventListener("change", function () {
      clearTimeout(timer);
      if (toggle.checked) poll();
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var box = document.querySelector(".log-lines");
    var toggle = document.querySelector(".follow-toggle");
    if (box && toggle) follow(box, toggle);
  });
})();
