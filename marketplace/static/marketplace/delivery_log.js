// The delivery log page: the sample payload of the chosen test event type, and the progress
// of "Resend all failed" (polled until it is finished). Loaded from our origin (CSP).
(function () {
  "use strict";

  var sampleRequest = 0;  // only the latest choice's answer is shown (answers may cross)

  function showSample(form) {
    var select = form.querySelector("select[name=event_type]");
    var target = document.querySelector(".sample-payload");
    if (!select || !target) return;
    var request = ++sampleRequest;
    var url = form.dataset.sampleUrl + "?type=" + encodeURIComponent(select.value);
    fetch(url, { credentials: "same-origin" })
      .then(function (response) { return response.json(); })
      .then(function (payload) {
        if (request === sampleRequest) target.textContent = JSON.stringify(payload, null, 2);
      })
      .catch(function () {
        if (request === sampleRequest) target.textContent = "The sample could not be loaded.";
      });
  }

  function pollProgress(box) {
    if (box.dataset.settled === "true") return;
    fetch(box.dataset.progressUrl, { credentials: "same-origin" })
      .then(function (response) { return response.json(); })
      .then(function (job) {
        var bar = box.querySelector("progress");
        bar.max = job.total;
        bar.value = job.done;
        box.querySelector(".progress-text").textContent = !job.finished
          ? "Resending: " + job.done + " of " + job.total + " done"
          : job.done < job.total
            ? "Stopped at " + job.done + " of " + job.total + ": ask again to resend the rest"
            : "Done: " + job.done + " of " + job.total;
        box.querySelector(".progress-detail").textContent =
          "(now " + job.succeeded + " succeeded, " + job.failed + " failed, " + job.open +
          " in progress" + (job.skipped ? ", " + job.skipped + " skipped: no longer failed" : "") + ")";
        box.dataset.settled = job.finished && !job.open ? "true" : "false";
        setTimeout(function () { pollProgress(box); }, 1000);
      })
      .catch(function () { setTimeout(function () { pollProgress(box); }, 3000); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var form = document.querySelector(".test-event-form");
    if (form) {
      form.querySelector("select[name=event_type]").addEventListener("change", function () {
        showSample(form);
      });
      showSample(form);
    }
    var box = document.querySelector(".resend-progress");
    if (box) pollProgress(box);
  });
})();
