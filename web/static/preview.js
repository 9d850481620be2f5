// quire: the live preview beside the document editor, and Ctrl+S / Cmd+S
// to save it.
//
// - The preview is the server's own rendering (POST /preview answers what
//   the document page would show, sanitised the same way), asked for
//   400 ms after the last keystroke or at once when the format changes; a
//   request still running is cancelled by the next one.
// - A button shows and hides it (aria-expanded, keyboard like any button);
//   the choice is kept in this browser. Without a choice it is shown on
//   wide screens, beside the editor, and hidden on narrow ones, where it
//   goes below the editor.
// - Errors (a session that ended, a body over the limit) are said in a
//   polite live region; so is showing and hiding. Updates are silent: a
//   screen reader would otherwise read the whole preview at every pause.
// - Ctrl+S (Cmd+S on a Mac) anywhere on the page sends the form with its
//   main button, as a click would (draft.js sees the submit).
//
// Loaded from /static with the CSP's script-src 'self'; nothing inline. The
// form works without it.
"use strict";

document.addEventListener("DOMContentLoaded", function () {
  var DELAY = 400; // ms after the last keystroke
  var CHOICE = "quire.preview"; // "1" shown, "0" hidden

  var form = document.getElementById("doc-form");
  if (!form) {
    return;
  }
  var save = form.querySelector("button[type='submit'].primary");

  document.addEventListener("keydown", function (ev) {
    var s = ev.key === "s" || ev.key === "S";
    if (!s || !(ev.ctrlKey || ev.metaKey) || ev.altKey || ev.shiftKey || ev.repeat) {
      return;
    }
    ev.preventDefault();
    if (!save) {
      return;
    }
    if (form.requestSubmit) {
      form.requestSubmit(save);
    } else {
      save.click();
    }
  });

  var toggle = document.getElementById("preview-toggle");
  var pane = document.getElementById("preview-pane");
  var body = document.getElementById("preview-body");
  var status = document.getElementById("preview-status");
  var keys = document.getElementById("preview-keys");
  var content = document.getElementById("content");
  var format = document.getElementById("content_type");
  if (!toggle || !pane || !body || !status || !content) {
    return;
  }
  if (keys && save) {
    keys.hidden = false;
  }

  var shown = false;
  var timer = null;
  var running = null; // the AbortController of the request in flight
  var rendered = null; // the format and text the preview shows
  var failed = false;

  function choice() {
    try {
      return window.localStorage.getItem(CHOICE);
    } catch (e) {
      return null;
    }
  }

  function remember(on) {
    try {
      window.localStorage.setItem(CHOICE, on ? "1" : "0");
    } catch (e) {
      // the choice lasts for this page only
    }
  }

  function say(text) {
    status.textContent = text;
  }

  function refresh() {
    timer = null;
    if (!shown) {
      return;
    }
    var type = format ? format.value : "markdown";
    var text = content.value;
    var key = type + "\n" + text;
    if (key === rendered && !failed) {
      return;
    }
    if (running) {
      running.abort();
    }
    var ctrl = new AbortController();
    running = ctrl;
    var data = new URLSearchParams();
    data.set("content_type", type);
    data.set("content", text);
    pane.setAttribute("aria-busy", "true");
    fetch("/preview", {
      method: "POST",
      body: data,
      credentials: "same-origin",
      redirect: "manual",
      signal: ctrl.signal,
      headers: { "Accept": "text/html" }
    }).then(function (res) {
      if (res.type === "opaqueredirect" || res.status === 401) {
        throw new Error("Your session has ended: sign in again in another tab to see the preview. Your text is still here.");
      }
      if (res.status === 413) {
        throw new Error("The content is too large to preview or to save.");
      }
      if (!res.ok) {
        throw new Error("The preview could not be updated (error " + res.status + ").");
      }
      return res.text();
    }).then(function (html) {
      if (running !== ctrl) {
        return;
      }
      running = null;
      // The server sanitised it exactly as the document page's content.
      body.innerHTML = html;
      body.className = "content content-" + type;
      rendered = key;
      pane.removeAttribute("aria-busy");
      if (failed) {
        failed = false;
        say("Preview updated.");
      }
    }).catch(function (err) {
      if (err && err.name === "AbortError") {
        return;
      }
      if (running === ctrl) {
        running = null;
      }
      failed = true;
      pane.removeAttribute("aria-busy");
      say(err && err.message ? err.message : "The preview could not be updated.");
    });
  }

  function later() {
    if (!shown) {
      return;
    }
    if (timer) {
      window.clearTimeout(timer);
    }
    timer = window.setTimeout(refresh, DELAY);
  }

  function show(on, announce) {
    shown = on;
    pane.hidden = !on;
    form.classList.toggle("previewing", on);
    toggle.setAttribute("aria-expanded", on ? "true" : "false");
    toggle.textContent = on ? "Hide preview" : "Show preview";
    if (announce) {
      say(on ? "Preview shown." : "Preview hidden.");
    }
    if (on) {
      refresh();
    }
  }

  toggle.hidden = false;
  toggle.addEventListener("click", function () {
    remember(!shown);
    show(!shown, true);
  });
  content.addEventListener("input", later);
  if (format) {
    format.addEventListener("change", refresh);
  }
  // The conflict page's buttons (app.js) and "Restore draft" (draft.js)
  // set the text without typing, which fires no input event.
  document.addEventListener("click", function (ev) {
    if (ev.target && ev.target.closest && ev.target.closest("#restore-draft, button[data-fill]")) {
      later();
    }
  });
  var saved = choice();
  var wide = window.matchMedia && window.matchMedia("(min-width: 60em)").matches;
  show(saved === null ? wide : saved === "1", false);
});
