// quire: comments beside the text (web/comments.go). Highlights the quote
// of each thread on the document's text, moves between a highlight and its
// thread, and offers "Comment" for a selection of the text, filling the new
// comment form with the quote and the text around it; opens in place the
// forms the column links to on a thread's page. Without it, every
// form of the comments column still works.
"use strict";

(function () {
  // The reading text, exactly as package anchor computes it on the server
  // (anchor.Text): the text of the rendered content, with a space at the
  // boundary of every block element, runs of white space (Go's
  // unicode.IsSpace) collapsed to one space, trimmed. The server finds a
  // thread's quote in that text; the offsets here agree with it only while
  // both follow the same rule.
  // The block elements are anchor's blockElements; the table of contents
  // (details.toc) and the § links of headings (a.anchor) are left out with
  // all they hold.
  var BLOCK = {};
  ("P H1 H2 H3 H4 H5 H6 UL OL LI DL DT DD PRE BLOCKQUOTE TABLE CAPTION THEAD TBODY TFOOT TR TH TD " +
    "DIV SECTION ARTICLE ASIDE NAV HEADER FOOTER MAIN ADDRESS FIGURE FIGCAPTION DETAILS SUMMARY " +
    "DIALOG FIELDSET LEGEND HGROUP MENU DIR BR HR").split(" ").forEach(function (t) { BLOCK[t] = true; });

  function skipped(el) {
    return (el.nodeName === "DETAILS" && el.classList.contains("toc")) ||
      (el.nodeName === "A" && el.classList.contains("anchor"));
  }

  function isSpace(c) {
    return c === 32 || (c >= 9 && c <= 13) || c === 0x85 || c === 0xa0 || c === 0x1680 ||
      (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f ||
      c === 0x205f || c === 0x3000;
  }

  // readingText walks the text nodes under root in document order, without
  // recursion (a deep document must not overflow the stack). It returns the
  // text and, for each of its UTF-16 units, the text node it comes from
  // (at, an index into nodes) and the offset in that node (off); a space
  // put for a boundary or a run of white space maps to the character after
  // it. base[k] is where node k's characters start in the text, first[k]
  // and last[k] the offsets of its first and last character kept (-1 when
  // it has only white space).
  function readingText(root) {
    var out = [], at = [], off = [], nodes = [], base = [], first = [], last = [];
    var index = new Map();
    var pending = false, n = root.firstChild;
    function text(node) {
      var s = node.data, k = nodes.length, f = -1, l = -1;
      nodes.push(node);
      index.set(node, k);
      base.push(out.length);
      for (var i = 0; i < s.length; i++) {
        var c = s.charCodeAt(i);
        if (isSpace(c)) {
          pending = true;
          continue;
        }
        if (pending && out.length) {
          out.push(" ");
          at.push(k);
          off.push(i);
        }
        pending = false;
        if (f < 0) {
          f = i;
        }
        l = i;
        out.push(s.charAt(i));
        at.push(k);
        off.push(i);
      }
      first.push(f);
      last.push(l);
    }
    while (n) {
      if (n.nodeType === 3) {
        text(n);
      } else if (n.nodeType === 1) {
        if (BLOCK[n.nodeName]) {
          pending = true;
        }
        if (n.firstChild && !skipped(n)) {
          n = n.firstChild;
          continue;
        }
      }
      for (;;) {
        if (n === root) {
          n = null;
          break;
        }
        if (n.nodeType === 1 && BLOCK[n.nodeName]) {
          pending = true; // the end of a block
        }
        if (n.nextSibling) {
          n = n.nextSibling;
          break;
        }
        n = n.parentNode;
      }
    }
    return { text: out.join(""), at: at, off: off, nodes: nodes, index: index, base: base, first: first, last: last, root: root };
  }

  // once is where s occurs in t when it occurs exactly once, else -1.
  function once(t, s) {
    var i = t.indexOf(s);
    return i < 0 || t.indexOf(s, i + 1) >= 0 ? -1 : i;
  }

  // find is anchor.Index.Find: where prefix+quote+suffix occurs when it
  // occurs once, else where the quote occurs when it occurs once, else -1.
  function find(text, quote, prefix, suffix) {
    if (!quote) {
      return -1;
    }
    var i = once(text, prefix + quote + suffix);
    if (i >= 0) {
      return i + prefix.length;
    }
    return once(text, quote);
  }

  // highlight wraps the quote of each thread in <mark> elements: every
  // text node is split once, at the edges of all the quotes in it, and a
  // piece several quotes share is one mark naming them all. It returns the
  // marks of each thread, in document order.
  function highlight(rt, threads) {
    var segs = new Map(), marks = {};
    threads.forEach(function (t) {
      var s = find(rt.text, t.quote, t.prefix, t.suffix);
      if (s < 0) {
        return;
      }
      var e = s + t.quote.length, a = rt.at[s], b = rt.at[e - 1];
      for (var k = a; k <= b; k++) {
        if (rt.first[k] < 0) {
          continue; // only white space: maybe between table cells
        }
        // Inside the quote a node is marked whole, its spaces with it.
        var from = k === a ? rt.off[s] : 0;
        var to = k === b ? rt.off[e - 1] + 1 : rt.nodes[k].data.length;
        if (from < to) {
          if (!segs.has(k)) {
            segs.set(k, []);
          }
          segs.get(k).push([from, to, t.id]);
        }
      }
    });
    Array.from(segs.keys()).sort(function (x, y) { return x - y; }).forEach(function (k) {
      var node = rt.nodes[k], list = segs.get(k), cuts = [0, node.data.length];
      list.forEach(function (g) { cuts.push(g[0], g[1]); });
      cuts.sort(function (x, y) { return x - y; });
      var frag = document.createDocumentFragment();
      for (var i = 0; i + 1 < cuts.length; i++) {
        var x = cuts[i], y = cuts[i + 1];
        if (x === y) {
          continue;
        }
        var piece = document.createTextNode(node.data.slice(x, y));
        var ids = list.filter(function (g) { return g[0] <= x && y <= g[1]; }).map(function (g) { return g[2]; });
        if (!ids.length) {
          frag.appendChild(piece);
          continue;
        }
        var m = document.createElement("mark");
        m.className = "comment-mark";
        m.tabIndex = -1;
        m.setAttribute("data-threads", ids.join(" "));
        m.appendChild(piece);
        frag.appendChild(m);
        ids.forEach(function (id) {
          (marks[id] = marks[id] || []).push(m);
        });
      }
      node.parentNode.replaceChild(frag, node);
    });
    return marks;
  }

  // position is the index in the reading text of a boundary point of a
  // selection: of the first character kept at or after it.
  function position(rt, container, offset) {
    var k = rt.index.get(container);
    if (k !== undefined) {
      var j = rt.base[k];
      while (j < rt.text.length && rt.at[j] === k && rt.off[j] < offset) {
        j++;
      }
      return j;
    }
    // A point between the children of an element: before child offset,
    // so at the first text node from there on.
    var n = container.childNodes[offset] || null;
    if (!n) {
      n = container;
      while (n && n !== rt.root && !n.nextSibling) {
        n = n.parentNode;
      }
      n = n && n !== rt.root ? n.nextSibling : null;
    }
    if (!n) {
      return rt.text.length;
    }
    var w = document.createTreeWalker(rt.root, NodeFilter.SHOW_TEXT);
    w.currentNode = n;
    var t = n.nodeType === 3 ? n : w.nextNode();
    while (t && !rt.index.has(t)) {
      t = w.nextNode(); // text of the table of contents or of a § link
    }
    if (!t) {
      return rt.text.length;
    }
    return rt.base[rt.index.get(t)];
  }

  // runes counts the characters (code points) of s, as the server does.
  function runes(s) {
    return Array.from(s).length;
  }

  var CONTEXT = 64, MAX_QUOTE = 1000;

  // anchorOf is the selection as an anchor of the reading text: its quote
  // (trimmed), and up to 64 characters before and after it. null when the
  // selection is not text of the document.
  function anchorOf(rt, sel) {
    if (!sel || sel.rangeCount === 0 || sel.isCollapsed) {
      return null;
    }
    var r = sel.getRangeAt(0);
    if (!rt.root.contains(r.commonAncestorContainer)) {
      return null;
    }
    var s = position(rt, r.startContainer, r.startOffset);
    var e = position(rt, r.endContainer, r.endOffset);
    var t = rt.text;
    while (s < e && t.charAt(s) === " ") {
      s++;
    }
    while (e > s && t.charAt(e - 1) === " ") {
      e--;
    }
    if (e <= s) {
      return null;
    }
    var prefix = t.slice(Math.max(0, s - CONTEXT), s);
    var suffix = t.slice(e, e + CONTEXT);
    // Never half a character: a surrogate pair cut at the edge goes.
    if (/^[\uDC00-\uDFFF]/.test(prefix)) {
      prefix = prefix.slice(1);
    }
    if (/[\uD800-\uDBFF]$/.test(suffix)) {
      suffix = suffix.slice(0, -1);
    }
    return { quote: t.slice(s, e), prefix: prefix, suffix: suffix, range: r };
  }

  document.addEventListener("DOMContentLoaded", function () {
    var body = document.getElementById("doc-body");
    var column = document.getElementById("comments");
    if (!body || !column) {
      return;
    }
    var threads = [];
    column.querySelectorAll("li.thread[data-quote]").forEach(function (li) {
      if (li.getAttribute("data-state") === "attached") {
        threads.push({
          id: li.id,
          li: li,
          quote: li.getAttribute("data-quote"),
          prefix: li.getAttribute("data-prefix") || "",
          suffix: li.getAttribute("data-suffix") || "",
        });
      }
    });
    var marks = highlight(readingText(body), threads);

    var active = [];
    function activate(id) {
      active.forEach(function (el) { el.classList.remove("active"); });
      active = [];
      var li = document.getElementById(id);
      if (!li) {
        return;
      }
      active = [li].concat(marks[id] || []);
      active.forEach(function (el) { el.classList.add("active"); });
    }
    function toThread(id) {
      activate(id);
      var li = document.getElementById(id);
      li.scrollIntoView({ block: "nearest" });
      li.focus({ preventScroll: true });
    }
    function toText(id) {
      var m = (marks[id] || [])[0];
      if (!m) {
        return;
      }
      activate(id);
      m.scrollIntoView({ block: "center" });
      m.focus({ preventScroll: true });
    }

    threads.forEach(function (t) {
      if (!marks[t.id]) {
        return;
      }
      var button = document.createElement("button");
      button.type = "button";
      button.className = "link small show-in-text";
      button.textContent = "Show in text";
      button.setAttribute("aria-label", "Show the quoted text in the document");
      var quote = t.li.querySelector(".quote");
      quote.parentNode.insertBefore(button, quote.nextSibling);
      button.addEventListener("click", function () { toText(t.id); });
    });
    // The column links to each thread's page for the forms that take
    // more than a button (reply, react, edit, delete): the form a link
    // names is fetched from that page and opened under the link, its first
    // field focused. Should that fail, the link is followed.
    function focusIn(el) {
      var f = el.querySelector("textarea") || el.querySelector("button");
      if (f) {
        f.focus();
      }
    }
    function openForm(link) {
      // The form is named by data-form, or by the link's fragment.
      var id = link.getAttribute("data-form") || link.hash.slice(1);
      var open = document.getElementById(id);
      if (open) {
        focusIn(open);
        return;
      }
      fetch(link.href, { credentials: "same-origin" }).then(function (res) {
        if (!res.ok) {
          throw new Error(res.status);
        }
        return res.text();
      }).then(function (html) {
        var el = new DOMParser().parseFromString(html, "text/html").getElementById(id);
        if (!el) {
          throw new Error("no form " + id);
        }
        el = document.importNode(el, true);
        el.classList.add("opened");
        if (el.nodeName === "DETAILS") {
          el.open = true;
        }
        var holder = link.parentNode;
        holder.parentNode.insertBefore(el, holder.nextSibling);
        link.setAttribute("aria-expanded", "true");
        focusIn(el);
      }).catch(function () {
        window.location.href = link.href;
      });
    }
    // Each comment of the column gets a button for each action its
    // data-can lists (the server's word on what the reader may do), which
    // opens that form of its thread's page.
    var ACTIONS = { react: ["React", "react-", "React to the comment by "],
      edit: ["Edit", "edit-form-", "Edit your comment"],
      "delete": ["Delete", "delete-", "Delete the comment by "] };
    column.querySelectorAll("article.comment[data-can]").forEach(function (article) {
      var more = article.closest("li.thread").querySelector("a.thread-link");
      if (!more) {
        return;
      }
      var cid = article.id.replace(/^comment-/, "");
      var author = (article.querySelector(".author") || {}).textContent || "";
      var p = document.createElement("p");
      p.className = "comment-actions";
      article.getAttribute("data-can").split(" ").forEach(function (can) {
        var a = ACTIONS[can];
        if (!a) {
          return;
        }
        var link = document.createElement("a");
        link.href = more.href.split("#")[0] + "#" + a[1] + cid;
        link.setAttribute("data-form", a[1] + cid);
        link.className = can + "-link" + (can === "delete" ? " danger" : "");
        link.textContent = a[0];
        link.setAttribute("aria-label", can === "edit" ? a[2] : a[2] + author);
        p.appendChild(link);
        p.appendChild(document.createTextNode(" "));
      });
      article.appendChild(p);
    });
    column.addEventListener("click", function (ev) {
      var link = ev.target.closest && ev.target.closest("a[data-form], a.reply-link");
      if (!link || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) {
        return;
      }
      ev.preventDefault();
      openForm(link);
    });

    // Back from a form at a thread (#thread-...): its highlight is lit.
    if (/^#thread-/.test(window.location.hash)) {
      activate(window.location.hash.slice(1));
    }
    body.addEventListener("click", function (ev) {
      var m = ev.target.closest && ev.target.closest("mark.comment-mark");
      if (m && !(window.getSelection() && !window.getSelection().isCollapsed)) {
        toThread(m.getAttribute("data-threads").split(" ")[0]);
      }
    });
    body.addEventListener("keydown", function (ev) {
      var m = ev.target.closest && ev.target.closest("mark.comment-mark");
      if (m && (ev.key === "Enter" || ev.key === " ")) {
        ev.preventDefault();
        toThread(m.getAttribute("data-threads").split(" ")[0]);
      }
    });

    // Selecting text of the document offers "Comment". The reading text is
    // walked again: the marks split its text nodes, not its text.
    var form = document.getElementById("new-comment");
    if (!form || !document.getElementById("comment-selection")) {
      return;
    }
    var rt = readingText(body);
    var quote = document.getElementById("new-quote");
    var prefix = document.getElementById("new-prefix");
    var suffix = document.getElementById("new-suffix");
    var box = document.getElementById("new-quote-box");
    var shown = document.getElementById("new-quote-text");
    var label = document.getElementById("new-body-label");
    var textarea = document.getElementById("new-body");
    var clear = document.getElementById("clear-quote");

    function setQuote(a) {
      quote.value = a ? a.quote : "";
      prefix.value = a ? a.prefix : "";
      suffix.value = a ? a.suffix : "";
      shown.textContent = a ? a.quote : "";
      box.hidden = !a;
      clear.hidden = !a;
      label.textContent = a ? "Comment on the quoted text" : "Comment on this page";
    }
    if (quote.value) {
      clear.hidden = false;
    }
    clear.addEventListener("click", function () {
      setQuote(null);
      textarea.focus();
    });

    var button = document.getElementById("comment-selection"); // after the text: next in the keyboard's order
    var pendingAnchor = null;

    function place() {
      var a = anchorOf(rt, window.getSelection());
      pendingAnchor = a;
      if (!a) {
        button.hidden = true;
        return;
      }
      var tooLong = runes(a.quote) > MAX_QUOTE;
      button.disabled = tooLong;
      button.textContent = tooLong ? "Select at most 1,000 characters to comment" : "Comment";
      button.setAttribute("aria-label", tooLong ? button.textContent : "Comment on the selected text");
      var rects = a.range.getClientRects();
      var rect = rects.length ? rects[rects.length - 1] : a.range.getBoundingClientRect();
      button.hidden = false;
      var width = button.offsetWidth;
      var left = Math.min(rect.right + window.scrollX - width / 2, window.scrollX + document.documentElement.clientWidth - width - 8);
      button.style.left = Math.max(window.scrollX + 8, left) + "px";
      button.style.top = rect.bottom + window.scrollY + 6 + "px";
    }
    // Placed at every change of the selection: the work is that of the
    // selection's ends, not of the text.
    document.addEventListener("selectionchange", place);
    button.addEventListener("click", function () {
      // The selection as it is now: its last selectionchange may not have
      // been handled yet.
      var a = anchorOf(rt, window.getSelection()) || pendingAnchor;
      if (!a) {
        return;
      }
      setQuote(a);
      button.hidden = true;
      form.scrollIntoView({ block: "nearest" });
      textarea.focus();
    });
  });
})();
