/* legal-judge item table: filter buttons and rows that open. No network, no storage. */
(function () {
  "use strict";
  function detailOf(row) { return document.getElementById(row.getAttribute("data-detail")); }
  function setOpen(row, open) {
    detailOf(row).classList.toggle("open", open);
    var button = row.querySelector("button.open");
    button.setAttribute("aria-expanded", open ? "true" : "false");
    button.textContent = open ? "\u2212" : "+";
  }
  document.querySelectorAll("[data-items]").forEach(function (box) {
    var rows = Array.prototype.slice.call(box.querySelectorAll("tr.item-row"));
    var status = box.querySelector(".filter-status");
    box.classList.add("js-on");
    function show(key, label) {
      var shown = 0;
      rows.forEach(function (row) {
        var lists = (row.getAttribute("data-categories") || "").split(" ");
        var keep = key === "all" || lists.indexOf(key) >= 0;
        row.classList.toggle("filtered-out", !keep);
        detailOf(row).classList.toggle("filtered-out", !keep);
        if (keep) { shown += 1; }
      });
      box.querySelectorAll("button.filter").forEach(function (b) {
        b.setAttribute("aria-pressed", b.getAttribute("data-filter") === key ? "true" : "false");
      });
      status.textContent = key === "all" ? "Showing all " + rows.length + " items."
        : "Showing " + shown + " of " + rows.length + " items: " + label + ".";
    }
    box.addEventListener("click", function (event) {
      var filter = event.target.closest("button.filter");
      if (filter) { show(filter.getAttribute("data-filter"), filter.getAttribute("data-label")); return; }
      var row = event.target.closest("tr.item-row");
      if (row && box.contains(row)) { setOpen(row, !detailOf(row).classList.contains("open")); }
    });
    var target = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    if (target && target.classList.contains("item-row") && box.contains(target)) { setOpen(target, true); }
  });
})();
