// quire: "select all" and a count for the bulk form of the documents list
// (list.html). The form works without it: each checkbox belongs to the
// form through its form attribute.
"use strict";

document.addEventListener("DOMContentLoaded", function () {
  var form = document.getElementById("bulk");
  var all = document.getElementById("bulk-all");
  var count = document.getElementById("bulk-count");
  if (!form || !all || !count) {
    return;
  }
  var boxes = Array.prototype.slice.call(document.querySelectorAll("input.bulk-check[form='bulk']"));
  function update() {
    var n = boxes.filter(function (b) { return b.checked; }).length;
    count.textContent = n === 0 ? "" : n + " selected";
    all.checked = n > 0 && n === boxes.length;
    all.indeterminate = n > 0 && n < boxes.length;
  }
  all.parentNode.hidden = false;
  all.addEventListener("change", function () {
    boxes.forEach(function (b) { b.checked = all.checked; });
    update();
  });
  boxes.forEach(function (b) { b.addEventListener("change", update); });
  update();
});
