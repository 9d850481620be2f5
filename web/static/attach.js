// quire: images and files in the editor (product.md section 13).
//
// Pasting or dropping files into the content, or choosing them with the
// "Add images or files" field, uploads each through the API
// (POST /api/documentation/documents/{id}/attachments, with this page's
// session cookie; the API accepts it from the same origin) and inserts a
// link at the cursor: ![name](url) for an image, [name](url) for any other
// file (<img>/<a> in an HTML document, the bare URL in plain text). The
// insertion is an input event like typing, so the draft keeps it and the
// page asks before it is left unsaved. With the editor (live.js) in place
// of the textarea, the files come from the editor and the link goes in at
// its cursor (window.quireEditor).
//
// Loaded from /static with the CSP's script-src 'self'; nothing inline.
// The form works without it: the upload field stays hidden.
"use strict";

(function () {
  function init() {
    var box = document.getElementById("attach");
    if (!box || !window.fetch || !window.FormData) {
      return;
    }
    var area = document.getElementById(box.getAttribute("data-for"));
    var url = box.getAttribute("data-upload-url");
    var input = document.getElementById("attach-file");
    var status = document.getElementById("attach-status");
    var format = document.getElementById("content_type");
    if (!area || !url) {
      return;
    }
    box.hidden = false;
    // The editor, when it replaced the textarea: its events come first
    // (capture), so that CodeMirror does not also take the files.
    var ed = window.quireEditor && area.id === "content" ? window.quireEditor : null;
    var surface = ed ? ed.dom : area;

    function say(text) {
      if (status) {
        status.textContent = text;
      }
    }

    // key is a fresh Idempotency-Key: a retry by the browser of the same
    // request never attaches the file twice.
    function key() {
      if (window.crypto && window.crypto.randomUUID) {
        return window.crypto.randomUUID();
      }
      return String(Date.now()) + "-" + String(Math.random()).slice(2);
    }

    // label escapes what would end a Markdown link text or an HTML
    // attribute.
    function label(name, kind) {
      if (kind === "html") {
        return name.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
      }
      return name.replace(/([\\\[\]])/g, "\\$1").replace(/[\r\n]+/g, " ");
    }

    function linkText(a) {
      var kind = format ? format.value : "markdown";
      var image = /^image\/(png|jpeg|gif|webp)$/.test(a.contentType);
      if (kind === "html") {
        return image ? '<img src="' + a.url + '" alt="' + label(a.name, kind) + '">'
          : '<a href="' + a.url + '">' + label(a.name, kind) + "</a>";
      }
      if (kind === "plain") {
        return a.url;
      }
      return (image ? "!" : "") + "[" + label(a.name, kind) + "](" + a.url + ")";
    }

    // insert puts text at the cursor (replacing the selection) as typing
    // would, so that the draft and the unsaved-changes guard see it. A
    // Markdown image gets a paragraph of its own; a link goes in the line.
    function insert(text, block) {
      var sel = ed ? ed.selection() : { from: area.selectionStart, to: area.selectionEnd };
      var value = ed ? ed.text() : area.value;
      var start = sel.from, end = sel.to;
      var before = value.slice(0, start), after = value.slice(end);
      if (block) {
        if (before && !/\n\n$/.test(before)) {
          text = (/\n$/.test(before) ? "\n" : "\n\n") + text;
        }
        if (!/^\n/.test(after)) {
          text += "\n";
        }
      } else if (before && !/\s$/.test(before)) {
        text = " " + text;
      }
      if (ed) {
        ed.replace(start, end, text); // the editor fires the textarea's input event
        return;
      }
      area.setRangeText(text, start, end, "end");
      area.dispatchEvent(new Event("input", { bubbles: true }));
    }

    function upload(file) {
      var body = new FormData();
      body.append("file", file, file.name || "pasted-image");
      say("Uploading " + (file.name || "image") + "…");
      return fetch(url, {
        method: "POST",
        body: body,
        credentials: "same-origin",
        headers: { "Idempotency-Key": key(), "Accept": "application/json" }
      }).then(function (res) {
        return res.json().catch(function () { return {}; }).then(function (data) {
          if (!res.ok || !data.attachment) {
            var why = (data && data.fields && data.fields.file) || (data && data.message) || ("error " + res.status);
            throw new Error(why);
          }
          return data.attachment;
        });
      }).then(function (a) {
        var kind = format ? format.value : "markdown";
        insert(linkText(a), kind === "markdown" && /^image\//.test(a.contentType) && !/svg/.test(a.contentType));
        say("Added " + a.name + ".");
      }, function (err) {
        say("Could not upload " + (file.name || "the image") + ": " + err.message);
      });
    }

    function uploadAll(files) {
      var chain = Promise.resolve();
      Array.prototype.forEach.call(files, function (f) {
        chain = chain.then(function () { return upload(f); });
      });
      return chain;
    }

    function filesOf(transfer) {
      return transfer && transfer.files && transfer.files.length ? transfer.files : null;
    }

    surface.addEventListener("paste", function (ev) {
      var files = filesOf(ev.clipboardData);
      if (!files) {
        return; // text: pasted as usual
      }
      ev.preventDefault();
      uploadAll(files);
    }, !!ed);
    surface.addEventListener("dragover", function (ev) {
      if (ev.dataTransfer && Array.prototype.indexOf.call(ev.dataTransfer.types || [], "Files") >= 0) {
        ev.preventDefault();
        surface.classList.add("dragging");
      }
    }, !!ed);
    surface.addEventListener("dragleave", function () {
      surface.classList.remove("dragging");
    });
    surface.addEventListener("drop", function (ev) {
      surface.classList.remove("dragging");
      var files = filesOf(ev.dataTransfer);
      if (!files) {
        return;
      }
      ev.preventDefault();
      (ed || area).focus();
      uploadAll(files);
    }, !!ed);
    if (input) {
      input.addEventListener("change", function () {
        var files = Array.prototype.slice.call(input.files || []);
        input.value = "";
        (ed || area).focus();
        uploadAll(files);
      });
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
