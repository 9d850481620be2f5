// quire: no typed text is lost on the document form.
//
// - Leaving or reloading the form with unsaved changes asks first
//   (beforeunload), and never after the form was sent.
// - While one types, the form is kept in this browser (localStorage), per
//   user and document ("new" for a new one), with the version the edit
//   started from. The next time that form opens, a kept draft that differs
//   from the page is offered back ("Restore draft" / "Discard"), never
//   applied silently. A draft started from an older version is restored
//   with that version as the base of the save, so that the conflict guard
//   shows both versions instead of overwriting the newer one.
// - A draft is removed when the save it was sent with succeeded: the form
//   notes in sessionStorage (this tab only) which draft it sent, and the
//   next page of the tab removes that draft only if it is the document's
//   page with the saved confirmation. A save that failed (a conflict, a
//   validation error, the network) leaves the draft where it was.
//
// Loaded from /static with the CSP's script-src 'self'; nothing inline. The
// form works without it.
"use strict";

(function () {
  var DRAFT_PREFIX = "quire.draft.";
  var PENDING = "quire.draft.sent";
  var SAVE_DELAY = 400; // ms after the last keystroke
  var SAVED_FLASHES = { saved: true, created: true, unchanged: true };

  // store returns the storage area of that name, or null when the browser
  // refuses it (private modes, disabled storage, quota of zero).
  function store(name) {
    try {
      var s = window[name];
      s.setItem("quire.probe", "1");
      s.removeItem("quire.probe");
      return s;
    } catch (e) {
      return null;
    }
  }

  function readJSON(s, key) {
    if (!s) {
      return null;
    }
    try {
      var v = JSON.parse(s.getItem(key) || "null");
      return v && typeof v === "object" ? v : null;
    } catch (e) {
      return null;
    }
  }

  function remove(s, key) {
    if (!s) {
      return;
    }
    try {
      s.removeItem(key);
    } catch (e) {
      // nothing to do
    }
  }

  // put writes a draft. When the browser's quota is full it drops the
  // oldest other drafts of quire and tries once more.
  function put(s, key, value) {
    var text = JSON.stringify(value);
    try {
      s.setItem(key, text);
      return true;
    } catch (e) {
      var others = [];
      for (var i = 0; i < s.length; i++) {
        var k = s.key(i);
        if (k && k !== key && k.indexOf(DRAFT_PREFIX) === 0) {
          var d = readJSON(s, k);
          others.push({ key: k, at: d && d.savedAt ? d.savedAt : 0 });
        }
      }
      others.sort(function (a, b) { return a.at - b.at; });
      others.forEach(function (o) { remove(s, o.key); });
      try {
        s.setItem(key, text);
        return true;
      } catch (e2) {
        return false;
      }
    }
  }

  function newID() {
    var a = new Uint32Array(4);
    window.crypto.getRandomValues(a);
    return Array.prototype.map.call(a, function (n) { return n.toString(36); }).join("");
  }

  // settleSentDraft runs on every page: when the page before it in this
  // tab sent a form with a draft, and this page is the document's page
  // after a successful save, that draft is removed. Any other page (the
  // form again with an error or a conflict, an error page) keeps it.
  function settleSentDraft(local, session) {
    var sent = readJSON(session, PENDING);
    if (!sent) {
      return;
    }
    remove(session, PENDING);
    if (!local || !sent.key || !sent.id) {
      return;
    }
    var path = window.location.pathname;
    var m = new URLSearchParams(window.location.search).get("m");
    var onDocument = /^\/documents\/[^/]+$/.test(path) && path !== "/documents/new";
    var same = sent.action === "/documents" || sent.action === path;
    if (!onDocument || !same || !SAVED_FLASHES[m]) {
      return;
    }
    var d = readJSON(local, sent.key);
    if (d && d.id === sent.id) {
      remove(local, sent.key);
    }
  }

  // fieldsOf are the form's visible fields: name → value.
  function fieldsOf(form) {
    var out = {};
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name || el.disabled || el.type === "hidden" || el.type === "submit" || el.type === "button") {
        return;
      }
      out[el.name] = el.value;
    });
    return out;
  }

  function sameFields(a, b) {
    var keys = Object.keys(a).concat(Object.keys(b));
    for (var i = 0; i < keys.length; i++) {
      if ((a[keys[i]] || "") !== (b[keys[i]] || "")) {
        return false;
      }
    }
    return true;
  }

  function hidden(form, name) {
    var el = form.elements.namedItem(name);
    return el && el.type === "hidden" ? el : null;
  }

  function when(ms) {
    var d = new Date(ms);
    try {
      return d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
    } catch (e) {
      return d.toString();
    }
  }

  function editor(form, local, session) {
    var key = DRAFT_PREFIX + form.getAttribute("data-draft-key");
    var baseInput = hidden(form, "baseUpdatedAt");
    var versionInput = hidden(form, "baseVersion");
    var loaded = fieldsOf(form); // what the server sent
    // A form sent back by the server (a conflict, a validation error)
    // holds text that is not saved yet, changed or not since.
    var unsavedFromStart = form.hasAttribute("data-unsaved");
    var sending = false;
    var offered = null; // a kept draft not yet restored or discarded
    var draftID = null; // the id of the draft this page wrote
    var timer = null;

    // In a live session (form[data-live], live.js) the content is saved
    // as it is typed: it is unsaved only while the editor has changes the
    // server has not confirmed.
    var live = form.hasAttribute("data-live") && window.quireEditor ? window.quireEditor : null;
    function dirty() {
      if (sending) {
        return false;
      }
      if (live) {
        var now = fieldsOf(form), was = Object.assign({}, loaded);
        now.content = was.content = "";
        return unsavedFromStart || live.unsent() > 0 || !sameFields(now, was);
      }
      return unsavedFromStart || !sameFields(fieldsOf(form), loaded);
    }

    function onBeforeUnload(ev) {
      if (!dirty()) {
        return undefined;
      }
      saveNow();
      ev.preventDefault();
      ev.returnValue = ""; // older browsers ask only with this set
      return "";
    }
    var armed = false;
    function arm() {
      var want = dirty();
      if (want && !armed) {
        window.addEventListener("beforeunload", onBeforeUnload);
      } else if (!want && armed) {
        window.removeEventListener("beforeunload", onBeforeUnload);
      }
      armed = want;
    }

    // saveNow keeps the form in the browser, or removes this page's draft
    // when the form is back to what was loaded. A draft on offer is left
    // alone until the reader restores or discards it.
    function saveNow() {
      clearTimeout(timer);
      timer = null;
      if (!local || offered) {
        return;
      }
      if (!dirty()) {
        if (draftID) {
          var d = readJSON(local, key);
          if (d && d.id === draftID) {
            remove(local, key);
          }
          draftID = null;
        }
        return;
      }
      var id = draftID || newID();
      var ok = put(local, key, {
        v: 1,
        id: id,
        savedAt: Date.now(),
        base: baseInput ? baseInput.value : "",
        baseVersion: versionInput ? versionInput.value : "",
        fields: fieldsOf(form)
      });
      if (ok) {
        draftID = id;
      }
    }

    function changed() {
      arm();
      clearTimeout(timer);
      timer = setTimeout(saveNow, SAVE_DELAY);
    }
    form.addEventListener("input", changed);
    form.addEventListener("change", changed);

    form.addEventListener("submit", function () {
      saveNow();
      sending = true;
      arm();
      if (session) {
        try {
          session.setItem(PENDING, JSON.stringify({ key: key, id: draftID, action: form.getAttribute("action") }));
        } catch (e) {
          // without it the draft stays, to be offered again: never lost
        }
      }
    });
    // Back to this page from the history: the form was not sent after all.
    window.addEventListener("pageshow", function (ev) {
      if (ev.persisted) {
        sending = false;
        arm();
      }
    });
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "hidden" && timer) {
        saveNow();
      }
    });

    // The conflict page's "keep theirs" is a choice to drop this text.
    document.querySelectorAll("[data-discard-draft]").forEach(function (el) {
      el.addEventListener("click", function () {
        remove(local, key);
        offered = null;
        sending = true;
        arm();
      });
    });

    var notice = document.getElementById("draft-notice");
    var kept = readJSON(local, key);
    if (unsavedFromStart) {
      // The form already holds what was sent; keep that instead.
      saveNow();
    } else if (kept && kept.fields && typeof kept.fields === "object") {
      if (sameFields(live ? withoutContent(kept.fields) : kept.fields, live ? withoutContent(loaded) : loaded)) {
        remove(local, key); // nothing in it that the page lacks
      } else if (notice) {
        offer(kept);
      }
    }
    arm();

    function offer(d) {
      offered = d;
      var text = "You have an unsaved draft from " + when(d.savedAt) + ".";
      if (baseInput && d.base && d.base !== baseInput.value) {
        text += " It was started from version " + d.baseVersion + "; the document has been saved since" +
          (versionInput ? " (now version " + versionInput.value + ")" : "") +
          ". If you restore it, saving shows both versions to compare before anything is overwritten.";
      }
      document.getElementById("draft-notice-text").textContent = text;
      notice.hidden = false;
      document.getElementById("restore-draft").addEventListener("click", restore);
      document.getElementById("discard-draft").addEventListener("click", discard);
    }

    // withoutContent: a kept draft's fields but the content. In a live
    // session the content is not restored from the draft: putting its old
    // text in would push it as one change over everyone's work. What was
    // typed and not sent is kept by the editor itself (live.js) and sent
    // again; the draft brings back the other fields only.
    function withoutContent(fields) {
      var out = Object.assign({}, fields);
      delete out.content;
      return out;
    }

    function restore() {
      var d = offered;
      if (!d) {
        return;
      }
      Object.keys(d.fields).forEach(function (name) {
        var el = form.elements.namedItem(name);
        if (!el || el.type === "hidden" || typeof d.fields[name] !== "string" || (live && name === "content")) {
          return;
        }
        if (el.tagName === "SELECT") {
          var has = Array.prototype.some.call(el.options, function (o) { return o.value === d.fields[name]; });
          if (!has) {
            return; // a folder or project gone since: keep the page's
          }
        }
        el.value = d.fields[name];
      });
      if (baseInput && d.base) {
        baseInput.value = d.base;
        if (versionInput && d.baseVersion) {
          versionInput.value = d.baseVersion;
        }
      }
      offered = null;
      draftID = d.id || null;
      notice.hidden = true;
      var content = form.elements.namedItem("content");
      if (content) {
        // The editor in place of the textarea (live.js) follows its input.
        content.dispatchEvent(new Event("input", { bubbles: true }));
      }
      saveNow();
      arm();
      if (window.quireEditor) {
        window.quireEditor.focus();
      } else if (content) {
        content.focus();
      }
    }

    function discard() {
      remove(local, key);
      offered = null;
      notice.hidden = true;
      arm();
      var first = form.elements.namedItem("title");
      if (first) {
        first.focus();
      }
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    var local = store("localStorage");
    var session = store("sessionStorage");
    settleSentDraft(local, session);
    var form = document.getElementById("doc-form");
    if (form && form.hasAttribute("data-draft-key")) {
      editor(form, local, session);
    }
  });
})();
