// Copy buttons: <button data-copy="ID" data-copied="Copied"> copies the text of the element with that id.
// A static file because the Content-Security-Policy allows no inline script. The Clipboard API needs a
// secure context (https or localhost); elsewhere the text is selected and copied with execCommand.
(function () {
  function fallback(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    document.body.removeChild(area);
    return ok ? Promise.resolve() : Promise.reject(new Error("copy failed"));
  }

  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () { return fallback(text); });
    }
    return fallback(text);
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button[data-copy]") : null;
    if (!button) return;
    var source = document.getElementById(button.dataset.copy);
    if (!source) return;
    if (!button.dataset.label) button.dataset.label = button.textContent;
    copy(source.textContent).then(function () {
      button.textContent = button.dataset.copied || "Copied";
      button.classList.add("copied");
      button.setAttribute("data-state", "copied");
      window.setTimeout(function () {
        button.textContent = button.dataset.label;
        button.classList.remove("copied");
        button.removeAttribute("data-state");
      }, 4000);
    }, function () {
      button.setAttribute("data-state", "failed");
    });
  });
})();
