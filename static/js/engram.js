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
