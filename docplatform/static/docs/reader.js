// The reader: an integration block's buttons and inputs post its form without reloading the
// page; the server answers the block's new HTML, which replaces the old one. Without this
// script the form posts as usual and the page reloads at the block.
(function () {
  "use strict";

  function replaceBlock(block, html) {
    var holder = document.createElement("template");
    holder.innerHTML = html.trim();
    var fresh = holder.content.firstElementChild;
    if (fresh) block.replaceWith(fresh);
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.matches("form[data-block-form]")) return;
    event.preventDefault();
    var block = form.closest(".page-block");
    var data = new FormData(form, event.submitter || undefined);
    block.classList.add("busy");
    block.setAttribute("aria-busy", "true");
    fetch(form.action, {
      method: "POST",
      body: data,
      credentials: "same-origin",
      headers: { "X-Requested-With": "fetch" },
    })
      .then(function (response) {
        return response.text().then(function (text) {
          if (!response.ok) throw new Error(response.status + " " + response.statusText);
          return text;
        });
      })
      .then(function (html) { replaceBlock(block, html); })
      .catch(function (error) {
        block.classList.remove("busy");
        block.removeAttribute("aria-busy");
        var note = block.querySelector(".page-block-error") || document.createElement("p");
        note.className = "errors page-block-error";
        note.textContent = "The block could not be updated (" + error.message + "). Reload the page and try again.";
        block.appendChild(note);
      });
  });

  // After a save the editor's draft of that page is no longer needed.
  var saving = sessionStorage.getItem("dp-saving");
  if (saving && new URLSearchParams(location.search).has("saved")) {
    localStorage.removeItem("dp-draft:" + saving);
    sessionStorage.removeItem("dp-saving");
    history.replaceState(null, "", location.pathname + location.hash);
  }
})();
