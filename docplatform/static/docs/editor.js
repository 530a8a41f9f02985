// The editor: a live preview rendered by the server (debounced), unsaved changes kept in this
// browser (restored after a reload, a warning before the tab closes), and the quick insert
// menu (Ctrl or Cmd + /, or the Insert button) that inserts a block at the cursor (an
// integration's, or an OpenAPI operation of the organization's documents),
// and who else has the page open (polled every 10 s, before anyone saves).
(function () {
  "use strict";
  var editor = document.querySelector("[data-editor]");
  if (!editor) return;
  var form = document.getElementById("page-form");
  var body = editor.querySelector("[data-body]");
  var preview = editor.querySelector("[data-preview]");
  var status = editor.querySelector("[data-preview-status]");
  var basedOn = editor.querySelector("[data-based-on]");
  var condition = editor.querySelector("[data-condition]");
  var claims = editor.querySelector("[data-claims]"); // "as a visitor with these claims"
  var fields = Array.prototype.slice.call(editor.querySelectorAll("[data-draft-field]"));
  var draftKey = "dp-draft:" + editor.dataset.draftKey;
  var csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  var dirty = false;

  // --- Who else has the page open ---------------------------------------------------------
  var presence = editor.querySelector("[data-presence]");
  function pollPresence() {
    var data = new FormData();
    data.append("path", editor.dataset.pagePath);
    fetch(editor.dataset.presenceUrl, {
      method: "POST",
      body: data,
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrf, "X-Requested-With": "fetch" },
    })
      .then(function (response) { return response.ok ? response.json() : { others: [] }; })
      .then(function (answer) {
        var others = answer.others || [];
        presence.hidden = others.length === 0;
        presence.textContent = others.length === 0 ? "" : others.join(", ") +
          (others.length === 1 ? " has" : " have") +
          " this page open too. Your changes and theirs are merged when you save; only lines you both change ask you.";
      })
      .catch(function () {});
  }
  if (editor.dataset.presenceUrl) {
    pollPresence();
    setInterval(pollPresence, 10000);
  }

  // --- Live preview ---------------------------------------------------------------------
  var timer = null;
  var sent = 0;
  function renderPreview() {
    var ticket = ++sent;
    var data = new FormData();
    data.append("body", body.value);
    data.append("page", editor.dataset.pagePath || "");
    data.append("condition", condition ? condition.value : "");
    data.append("claims", claims ? claims.value : "");
    status.textContent = "Updating…";
    fetch(editor.dataset.previewUrl, {
      method: "POST",
      body: data,
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrf, "X-Requested-With": "fetch" },
    })
      .then(function (response) { return response.text(); })
      .then(function (html) {
        if (ticket !== sent) return; // a newer preview is on its way
        preview.innerHTML = html; // the server's sanitized HTML
        status.textContent = "";
      })
      .catch(function () { status.textContent = "Preview unavailable"; });
  }
  function schedulePreview() {
    clearTimeout(timer);
    timer = setTimeout(renderPreview, 300);
  }

  // --- Drafts ---------------------------------------------------------------------------
  function snapshot() {
    var draft = { basedOn: basedOn.value };
    fields.forEach(function (field) { draft[field.name] = field.value; });
    return draft;
  }
  var initial = JSON.stringify(snapshot());
  function saveDraft() {
    var now = snapshot();
    dirty = JSON.stringify(now) !== initial;
    if (dirty) localStorage.setItem(draftKey, JSON.stringify(now));
    else localStorage.removeItem(draftKey);
  }
  function restoreDraft() {
    if (editor.querySelector("[data-conflict]")) return; // the server shows the draft itself
    var raw = localStorage.getItem(draftKey);
    if (!raw) return;
    var draft;
    try { draft = JSON.parse(raw); } catch (error) { return; }
    if (JSON.stringify(draft) === initial) return;
    fields.forEach(function (field) {
      if (typeof draft[field.name] === "string") field.value = draft[field.name];
    });
    // Saved against the revision it was written from: a newer one is a conflict to show.
    if (draft.basedOn) basedOn.value = draft.basedOn;
    dirty = true;
    var notice = editor.querySelector("[data-draft-notice]");
    notice.hidden = false;
    notice.querySelector("[data-discard-restored]").addEventListener("click", function () {
      localStorage.removeItem(draftKey);
      dirty = false;
      location.reload();
    });
  }
  restoreDraft();
  fields.forEach(function (field) {
    field.addEventListener("input", function () {
      saveDraft();
      if (field === body || field === condition) schedulePreview();
    });
  });
  if (claims) claims.addEventListener("input", schedulePreview);
  window.addEventListener("beforeunload", function (event) {
    if (!dirty) return;
    event.preventDefault();
    event.returnValue = "";
  });
  form.addEventListener("submit", function () {
    dirty = false; // the browser keeps the draft until the reader confirms the save
    sessionStorage.setItem("dp-saving", editor.dataset.draftKey);
  });
  editor.querySelectorAll("[data-discard-draft]").forEach(function (link) {
    link.addEventListener("click", function () {
      localStorage.removeItem(draftKey);
      dirty = false;
    });
  });
  document.querySelectorAll("form[data-confirm]").forEach(function (other) {
    other.addEventListener("submit", function (event) {
      if (!window.confirm(other.dataset.confirm)) event.preventDefault();
      else dirty = false;
    });
  });
  renderPreview();

  // --- Quick insert ---------------------------------------------------------------------
  var blocks = JSON.parse(document.getElementById("quick-insert-blocks").textContent);
  var backdrop = editor.querySelector("[data-quick-insert]");
  var search = backdrop.querySelector("[data-quick-insert-search]");
  var list = backdrop.querySelector("[data-quick-insert-list]");
  var empty = backdrop.querySelector("[data-quick-insert-empty]");
  var shown = [];
  var chosen = 0;
  var cursor = { start: 0, end: 0 };

  function matches(block, words) {
    var text = [block.title, block.description, block.integration_title, block.integration, block.block]
      .join(" ").toLowerCase();
    return words.every(function (word) { return text.indexOf(word) !== -1; });
  }
  function option(block, index) {
    var item = document.createElement("li");
    item.setAttribute("role", "option");
    item.id = "quick-insert-option-" + index;
    var icon = document.createElement("span");
    icon.className = "qi-icon";
    if (block.icon_url) {
      var image = document.createElement("img");
      image.src = block.icon_url;
      image.alt = "";
      icon.appendChild(image);
    } else {
      icon.textContent = (block.integration_title || "?").charAt(0).toUpperCase();
    }
    var text = document.createElement("span");
    var title = document.createElement("span");
    title.className = "qi-title";
    title.textContent = block.title;
    var meta = document.createElement("span");
    meta.className = "qi-meta";
    meta.textContent = block.integration_title + (block.description ? " · " + block.description : "");
    text.appendChild(title);
    text.appendChild(document.createElement("br"));
    text.appendChild(meta);
    item.appendChild(icon);
    item.appendChild(text);
    item.addEventListener("mousedown", function (event) { event.preventDefault(); });
    item.addEventListener("click", function () { insert(block); });
    item.addEventListener("mousemove", function () { select(index); });
    return item;
  }
  function select(index) {
    chosen = index;
    Array.prototype.forEach.call(list.children, function (item, at) {
      item.setAttribute("aria-selected", at === index ? "true" : "false");
      if (at === index) {
        search.setAttribute("aria-activedescendant", item.id);
        item.scrollIntoView({ block: "nearest" });
      }
    });
  }
  function filter() {
    var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    shown = blocks.filter(function (block) { return matches(block, words); });
    list.replaceChildren.apply(list, shown.map(option));
    empty.hidden = shown.length > 0;
    select(0);
  }
  function open() {
    cursor = { start: body.selectionStart, end: body.selectionEnd };
    backdrop.hidden = false;
    search.value = "";
    filter();
    search.focus();
  }
  function close() {
    backdrop.hidden = true;
    body.focus();
    body.setSelectionRange(cursor.start, cursor.end);
  }
  function randomKey() {
    var alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    var bytes = new Uint8Array(12);
    crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return alphabet[b % alphabet.length]; }).join("");
  }
  function insert(block) {
    var fence = "```block\n" + JSON.stringify({
      integration: block.integration, block: block.block, key: randomKey(), props: block.props || {},
    }) + "\n```\n";
    var before = body.value.slice(0, cursor.start);
    var after = body.value.slice(cursor.end);
    var lead = before && !before.endsWith("\n\n") ? (before.endsWith("\n") ? "\n" : "\n\n") : "";
    var trail = after && !after.startsWith("\n") ? "\n" : "";
    body.value = before + lead + fence + trail + after;
    var at = (before + lead + fence).length;
    cursor = { start: at, end: at };
    close();
    saveDraft();
    renderPreview();
  }
  search.addEventListener("input", filter);
  search.addEventListener("keydown", function (event) {
    if (event.key === "ArrowDown") { event.preventDefault(); if (shown.length) select((chosen + 1) % shown.length); }
    else if (event.key === "ArrowUp") { event.preventDefault(); if (shown.length) select((chosen - 1 + shown.length) % shown.length); }
    else if (event.key === "Enter") { event.preventDefault(); if (shown[chosen]) insert(shown[chosen]); }
    else if (event.key === "Escape") { event.preventDefault(); close(); }
  });
  backdrop.addEventListener("keydown", function (event) {
    if (event.key === "Escape") { event.preventDefault(); close(); }
  });
  backdrop.addEventListener("mousedown", function (event) { if (event.target === backdrop) close(); });
  editor.querySelector("[data-quick-insert-open]").addEventListener("click", open);
  document.addEventListener("keydown", function (event) {
    if (event.key === "/" && (event.ctrlKey || event.metaKey) && backdrop.hidden) {
      event.preventDefault();
      open();
    }
  });
})();
