// Forms marked data-autosubmit submit when a select changes (no inline handlers: CSP 'self').
document.addEventListener("change", function (e) {
  var form = e.target.closest && e.target.closest("form[data-autosubmit]");
  if (form && e.target.tagName === "SELECT") form.requestSubmit ? form.requestSubmit() : form.submit();
});
