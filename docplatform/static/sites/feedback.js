// A published site's "Was this page helpful?": the pressed rating and the comment go to the
// feedback address as JSON without a reload, and the answer is shown in the form's status line
// (as text: a comment is never read as HTML). Without this script the form posts as usual and
// the page comes back with a thank-you.
(function () {
  "use strict";

  var LABELS = { good: "Good", ok: "OK", bad: "Bad" };

  function problems(errors) {
    var lines = [];
    Object.keys(errors || {}).forEach(function (field) {
      errors[field].forEach(function (problem) { lines.push(field + ": " + problem); });
    });
    return lines.join(" ");
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.matches("form[data-feedback-form]")) return;
    event.preventDefault();
    var rating = event.submitter && event.submitter.value;
    var status = form.querySelector("[data-feedback-status]");
    var buttons = form.querySelectorAll("button[name=rating]");
    form.setAttribute("aria-busy", "true");
    fetch(form.action, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({
        page: form.elements.page.value,
        rating: rating,
        comment: form.elements.comment.value,
        referrer: document.referrer,
      }),
    })
      .then(function (response) {
        return response.json().then(function (answer) { return { ok: response.ok, answer: answer }; });
      })
      .then(function (result) {
        if (!result.ok) throw new Error(problems(result.answer.errors) || "it was refused");
        buttons.forEach(function (button) {
          button.setAttribute("aria-pressed", String(button.value === result.answer.rating));
        });
        status.classList.remove("errors");
        status.textContent = "Thank you: you rated this page “" + LABELS[result.answer.rating] +
          "”. Rate again to change it." +
          (result.answer.comment ? " Your comment: " + result.answer.comment : "");
      })
      .catch(function (error) {
        status.classList.add("errors");
        status.textContent = "Your feedback was not sent (" + error.message + ").";
      })
      .finally(function () { form.removeAttribute("aria-busy"); });
  });
})();
