// Small glue for HTMX pages: show refusals (403, 404, 409...) instead of silently doing nothing.
document.addEventListener("htmx:responseError", function (event) {
  var flash = document.getElementById("flash");
  if (!flash) return;
  var status = event.detail.xhr.status;
  var text = status === 403 ? flash.dataset.forbidden : status === 404 ? flash.dataset.notfound : flash.dataset.failed;
  flash.textContent = (text || "Error") + " (" + status + ")";
  flash.className = "messages-error";
});
