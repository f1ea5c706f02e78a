// Live tables (hx-trigger "every ...") send back the hash of what they show; the server
// answers 204 when a fresh render is the same, and htmx then leaves the table alone, keeping
// the reader's selection and scroll (inventory/htmx.py render_live).
(function () {
  var shown = {};
  document.addEventListener("htmx:configRequest", function (e) {
    var target = e.detail.target;
    // Only the table's own refresh: a filter change must always swap in its result.
    if (target && target.id && e.detail.elt === target && shown[target.id]) {
      e.detail.headers["X-Claimscope-Seen"] = shown[target.id];
    }
  });
  document.addEventListener("htmx:afterRequest", function (e) {
    var target = e.detail.target, xhr = e.detail.xhr;
    var digest = xhr && xhr.getResponseHeader("X-Claimscope-Content");
    if (target && target.id && digest && e.detail.successful) shown[target.id] = digest;
  });
})();
