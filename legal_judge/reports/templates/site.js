/* legal-judge site index: filter by kind and by text. No network, no storage. */
(function () {
  "use strict";
  var box = document.querySelector("[data-site]");
  if (!box) { return; }
  var rows = Array.prototype.slice.call(box.querySelectorAll("tr.entry"));
  var status = box.querySelector(".filter-status");
  var search = box.querySelector("input.search");
  var kind = "all";
  var label = "Everything";
  box.classList.add("js-on");
  function show() {
    var words = search.value.toLowerCase().split(/\s+/).filter(function (w) { return w; });
    var shown = 0;
    rows.forEach(function (row) {
      var text = row.textContent.toLowerCase();
      var keep = (kind === "all" || row.getAttribute("data-kind") === kind) &&
        words.every(function (w) { return text.indexOf(w) >= 0; });
      row.classList.toggle("filtered-out", !keep);
      if (keep) { shown += 1; }
    });
    box.querySelectorAll("button.filter").forEach(function (b) {
      b.setAttribute("aria-pressed", b.getAttribute("data-filter") === kind ? "true" : "false");
    });
    status.textContent = (kind === "all" && !words.length) ? "Showing all " + rows.length + " entries."
      : "Showing " + shown + " of " + rows.length + " entries: " + label +
        (words.length ? ", matching \u201c" + search.value.trim() + "\u201d" : "") + ".";
  }
  box.addEventListener("click", function (event) {
    var filter = event.target.closest("button.filter");
    if (!filter) { return; }
    kind = filter.getAttribute("data-filter");
    label = filter.getAttribute("data-label");
    show();
  });
  search.addEventListener("input", show);
})();
