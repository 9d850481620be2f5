// quire: small comforts on top of pages that work without JavaScript.
// Loaded from /static with the CSP's script-src 'self'; nothing inline.
"use strict";

document.addEventListener("DOMContentLoaded", function () {
  // Send the browser's time zone with the sign-in, so that times are shown
  // in it afterwards.
  document.querySelectorAll("input[data-timezone]").forEach(function (input) {
    try {
      input.value = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
    } catch (e) {
      input.value = "";
    }
  });

  // Pages opened from a mailed link carry a token in the address: take it
  // out of the address bar and the history once the form holds it.
  if (document.querySelector("[data-strip-query]") && window.location.search) {
    window.history.replaceState(null, "", window.location.pathname);
  }

  // "/" focuses the search field, as in many readers.
  var search = document.querySelector("input[data-shortcut='/']");
  if (search) {
    document.addEventListener("keydown", function (ev) {
      var t = ev.target;
      var typing = t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable);
      if (ev.key === "/" && !typing && !ev.ctrlKey && !ev.metaKey && !ev.altKey) {
        ev.preventDefault();
        search.focus();
        search.select();
      }
    });
  }

  // Share links: a Copy button beside each link's field (the field itself
  // stays selectable without JavaScript).
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var field = document.getElementById(button.getAttribute("data-copy"));
    if (!field) {
      return;
    }
    button.hidden = false;
    button.addEventListener("click", function () {
      field.select();
      if (navigator.clipboard) {
        navigator.clipboard.writeText(field.value).then(function () {
          button.textContent = "Copied";
        }, function () {});
      }
    });
  });

  // Conflict page: buttons that copy one version's text into the editor.
  document.querySelectorAll("button[data-fill]").forEach(function (button) {
    var target = document.getElementById(button.getAttribute("data-fill"));
    var source = document.getElementById(button.getAttribute("data-from"));
    if (!target || !source) {
      return;
    }
    button.hidden = false;
    button.addEventListener("click", function () {
      target.value = source.value;
      // The editor in place of the textarea (live.js) follows its input.
      target.dispatchEvent(new Event("input", { bubbles: true }));
      if (target.id === "content" && window.quireEditor) {
        window.quireEditor.focus();
      } else {
        target.focus();
      }
    });
  });
});
