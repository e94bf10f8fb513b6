// The webhooks page: a button[data-copy="<selector>"] copies that element's text (the secret shown once).
document.addEventListener("click", function (event) {
  var button = event.target.closest && event.target.closest("button[data-copy]");
  if (!button) return;
  var source = document.querySelector(button.dataset.copy);
  if (!source) return;
  var text = source.textContent.trim();
  var done = function () {
    button.textContent = button.dataset.copied || "Copied";
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, function () { selectText(source); });
  } else {
    selectText(source);
    try { document.execCommand("copy"); done(); } catch (e) { /* the text stays selected for a manual copy */ }
  }
});

function selectText(node) {
  var range = document.createRange();
  range.selectNodeContents(node);
  var selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
}
