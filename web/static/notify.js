// quire: notifications in the pages (web/notify.go). Keeps the bell's
// count current from the server's stream of events, marks a notification
// read when its link is followed, and offers the people to mention when "@"
// is typed in the editor (the document's, live.js, or a textarea) or a
// comment form. Without it, the bell shows the
// count the page was rendered with and every form still works.
"use strict";

(function () {
  // The bell: one EventSource per tab, open while the tab is visible (a
  // hidden tab gives its connection back; showing it again reconnects and
  // gets the count at once). The server ends a stream after its lifetime
  // and the browser reconnects by itself; an "end" event means the session
  // is over, and the page stops listening.
  var bell = document.getElementById("bell");
  var count = document.getElementById("bell-count");
  var status = document.getElementById("bell-status");
  if (bell && count && window.EventSource) {
    var source = null, retry = 0, ended = false;
    var shown = parseInt(count.textContent, 10) || 0;
    var show = function (n) {
      if (isNaN(n) || n < 0) {
        return;
      }
      count.textContent = String(n);
      count.hidden = n === 0;
      bell.classList.toggle("has-unread", n > 0);
      bell.setAttribute("aria-label", n > 0 ? "Notifications, " + n + " unread" : "Notifications");
      if (status && n > shown) {
        status.textContent = n === 1 ? "1 unread notification" : n + " unread notifications";
      }
      shown = n;
    };
    var close = function () {
      bell.removeAttribute("data-live");
      if (source) {
        source.close();
        source = null;
      }
      clearTimeout(retry);
    };
    var open = function () {
      if (source || ended) {
        return;
      }
      source = new EventSource(bell.getAttribute("data-stream"));
      source.addEventListener("unread", function (e) {
        bell.setAttribute("data-live", ""); // the count is the server's latest
        show(parseInt(e.data, 10));
      });
      source.addEventListener("end", function () {
        ended = true;
        close();
      });
      source.onerror = function () {
        // A refused stream (signed out, too many open) is not retried by
        // the browser: try again in a minute.
        if (source && source.readyState === EventSource.CLOSED) {
          source = null;
          retry = setTimeout(open, 60000);
        }
      };
    };
    document.addEventListener("visibilitychange", function () {
      if (document.hidden) {
        close();
      } else {
        open();
      }
    });
    window.addEventListener("pagehide", close);
    if (!document.hidden) {
      open();
    }
  }

  // The notifications page: following a notification's link marks it read
  // (the same form as its Mark read button, sent in the background).
  document.addEventListener("click", function (e) {
    var link = e.target.closest && e.target.closest("a.notification-link");
    var item = link && link.closest(".notification.unread");
    if (!item) {
      return;
    }
    var id = item.getAttribute("data-id");
    try {
      fetch("/notifications/" + encodeURIComponent(id) + "/read", {
        method: "POST", body: new URLSearchParams(), keepalive: true, redirect: "manual", credentials: "same-origin"
      }).catch(function () {});
    } catch (err) {
      // The link still leads to its place.
    }
  });

  // The mention picker. A textarea inside an element with
  // data-mention-doc (the editor of a saved document, the comments column)
  // offers, after "@" and the start of a name, the people who can see that
  // document (at most 10, from the API's mentionable list); the arrow keys
  // choose, Enter or Tab inserts [@Name](mention:USER-ID), Escape closes.
  // The document's content is typed in the editor (live.js) in place of
  // its textarea: there the picker works on the editor (window.quireEditor),
  // whose changes reach the textarea as input events.
  var picker = null, target = null, people = [], active = -1, timer = 0, asked = 0, start = -1;

  // field is what a textarea's picker works on: the textarea itself, or
  // the editor that replaced it.
  var fields = [];
  var fieldOf = function (ta) {
    for (var i = 0; i < fields.length; i++) {
      if (fields[i].ta === ta) {
        return fields[i];
      }
    }
    var ed = ta.id === "content" && ta.hidden && window.quireEditor ? window.quireEditor : null;
    var f = ed ? {
      ta: ta,
      el: ed.dom.querySelector(".cm-content") || ed.dom, // focus, keys and aria
      after: ed.dom, // the picker goes after it
      value: function () { return ed.text(); },
      caret: function () { var s = ed.selection(); return s.from === s.to ? s.to : -1; },
      focused: function () { return ed.dom.contains(document.activeElement); },
      replace: function (from, to, text) { ed.replace(from, to, text); ed.focus(); }
    } : {
      ta: ta,
      el: ta,
      after: ta,
      value: function () { return ta.value; },
      caret: function () { return ta.selectionStart === ta.selectionEnd ? ta.selectionStart : -1; },
      focused: function () { return document.activeElement === ta; },
      replace: function (from, to, text) {
        ta.setRangeText(text, from, to, "end");
        ta.dispatchEvent(new Event("input", {bubbles: true})); // drafts and previews see the change
        ta.focus();
      }
    };
    fields.push(f);
    return f;
  };

  var mentionDoc = function (ta) {
    var holder = ta.closest && ta.closest("[data-mention-doc]");
    return holder ? holder.getAttribute("data-mention-doc") : "";
  };

  // query is the name being typed after an "@" just before the caret, or
  // null when there is none; start is where its "@" is.
  var query = function (f) {
    var caret = f.caret();
    if (caret < 0) {
      return null;
    }
    var before = f.value().slice(Math.max(0, caret - 40), caret);
    var m = /(^|[\s(])@([^\s@[\]()]{0,30})$/.exec(before);
    if (!m) {
      return null;
    }
    start = caret - m[2].length - 1;
    return m[2];
  };

  var ensurePicker = function () {
    if (!picker) {
      picker = document.createElement("ul");
      picker.id = "mention-picker";
      picker.className = "mention-picker";
      picker.setAttribute("role", "listbox");
      picker.setAttribute("aria-label", "People to mention");
      picker.hidden = true;
      picker.addEventListener("mousedown", function (e) {
        var li = e.target.closest("li[role=option]");
        if (li) {
          e.preventDefault(); // keep the focus in the field
          insert(parseInt(li.getAttribute("data-index"), 10));
        }
      });
    }
    return picker;
  };

  var hide = function () {
    clearTimeout(timer);
    asked++;
    if (picker) {
      picker.hidden = true;
    }
    if (target) {
      target.el.setAttribute("aria-expanded", "false");
      target.el.removeAttribute("aria-activedescendant");
    }
    people = [];
    active = -1;
  };

  var highlight = function (i) {
    active = i;
    var items = picker.querySelectorAll("li[role=option]");
    for (var k = 0; k < items.length; k++) {
      items[k].setAttribute("aria-selected", k === i ? "true" : "false");
    }
    if (i >= 0 && items[i]) {
      target.el.setAttribute("aria-activedescendant", items[i].id);
    } else {
      target.el.removeAttribute("aria-activedescendant");
    }
  };

  var render = function (f) {
    var ul = ensurePicker();
    if (ul.previousElementSibling !== f.after) {
      f.after.insertAdjacentElement("afterend", ul);
    }
    ul.textContent = "";
    if (people.length === 0) {
      var none = document.createElement("li");
      none.className = "mention-none";
      none.textContent = "No one by that name can see this document.";
      ul.appendChild(none);
    }
    people.forEach(function (p, i) {
      var li = document.createElement("li");
      li.id = "mention-option-" + i;
      li.setAttribute("role", "option");
      li.setAttribute("data-index", String(i));
      li.textContent = p.name;
      ul.appendChild(li);
    });
    ul.hidden = false;
    f.el.setAttribute("aria-controls", ul.id);
    f.el.setAttribute("aria-expanded", "true");
    highlight(people.length ? 0 : -1);
  };

  var ask = function (f, doc, q) {
    var n = ++asked;
    fetch("/api/documentation/documents/" + encodeURIComponent(doc) + "/mentionable?q=" + encodeURIComponent(q),
      {credentials: "same-origin", headers: {Accept: "application/json"}})
      .then(function (r) { return r.ok ? r.json() : {users: []}; })
      .then(function (body) {
        if (n !== asked || target !== f || !f.focused()) {
          return; // a later keystroke asked again, or the focus moved
        }
        people = (body.users || []).slice(0, 10);
        render(f);
      })
      .catch(function () {});
  };

  var insert = function (i) {
    var p = people[i];
    var f = target;
    if (!p || !f || start < 0) {
      return;
    }
    // A name with brackets or a line break would end the mention early.
    var name = String(p.name).replace(/[[\]\r\n]/g, " ");
    var text = "[@" + name + "](mention:" + p.id + ") ";
    var end = f.caret();
    var from = start;
    hide();
    f.replace(from, end < 0 ? from : end, text);
  };

  document.addEventListener("input", function (e) {
    var ta = e.target;
    if (!ta || ta.nodeName !== "TEXTAREA" || ta.readOnly) {
      return;
    }
    var doc = mentionDoc(ta);
    if (!doc) {
      return;
    }
    var f = fieldOf(ta);
    var q = query(f);
    if (q === null) {
      if (target === f) {
        hide();
      }
      return;
    }
    target = f;
    f.el.setAttribute("aria-autocomplete", "list");
    clearTimeout(timer);
    timer = setTimeout(function () { ask(f, doc, q); }, 120);
  });

  // In the capture phase: before the editor takes Enter or the arrows.
  document.addEventListener("keydown", function (e) {
    if (!picker || picker.hidden || !target || e.target !== target.el) {
      return;
    }
    switch (e.key) {
      case "ArrowDown":
        if (people.length) {
          highlight((active + 1) % people.length);
        }
        e.preventDefault();
        break;
      case "ArrowUp":
        if (people.length) {
          highlight((active - 1 + people.length) % people.length);
        }
        e.preventDefault();
        break;
      case "Enter":
      case "Tab":
        if (active >= 0) {
          e.preventDefault();
          insert(active);
        } else {
          hide();
        }
        break;
      case "Escape":
        e.preventDefault();
        hide();
        break;
    }
  }, true);

  document.addEventListener("focusout", function (e) {
    if (target && e.target === target.el) {
      hide();
    }
  });
})();
