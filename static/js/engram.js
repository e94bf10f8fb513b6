// Small glue for HTMX pages: show refusals (403, 404, 409...) instead of silently doing nothing.
document.addEventListener("htmx:responseError", function (event) {
  var flash = document.getElementById("flash");
  if (!flash) return;
  var status = event.detail.xhr.status;
  var text = status === 403 ? flash.dataset.forbidden : status === 404 ? flash.dataset.notfound : flash.dataset.failed;
  flash.textContent = (text || "Error") + " (" + status + ")";
  flash.className = "messages-error";
});

// Behaviour that would otherwise be inline handlers (the Content-Security-Policy allows no inline script):
// a <select data-autosubmit> submits its form on change; a <form data-confirm="..."> asks first.
document.addEventListener("change", function (event) {
  var target = event.target;
  if (target.matches && target.matches("select[data-autosubmit]") && target.form) target.form.submit();
});
document.addEventListener("submit", function (event) {
  var message = event.target.dataset && event.target.dataset.confirm;
  if (message && !window.confirm(message)) event.preventDefault();
});

// A field wrapped in <div data-shown-by="id_of_select"> applies only when that select has a value (the add
// form's "who can see it" is for project memories only): hidden otherwise.
function engramShowFields(root) {
  (root || document).querySelectorAll("[data-shown-by]").forEach(function (box) {
    var select = document.getElementById(box.dataset.shownBy);
    if (select) box.hidden = !select.value;
  });
}
document.addEventListener("change", function (event) {
  if (event.target.id && document.querySelector('[data-shown-by="' + event.target.id + '"]')) engramShowFields();
});
document.addEventListener("DOMContentLoaded", function () { engramShowFields(); });
document.addEventListener("htmx:afterSwap", function (event) { engramShowFields(event.detail.target.parentNode); });
