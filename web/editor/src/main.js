// quire: the document editor (CodeMirror 6) in place of the content's
// textarea, and live editing with others when the page offers it.
//
// The textarea stays the form's field: it is hidden, and every change of
// the editor is written back into it with an "input" event, so that the
// classic form POST, the kept draft (draft.js), the preview (preview.js)
// and the leave warning see what they saw before. A script that sets the
// textarea's value and fires "input" on it (a restored draft, the conflict
// page's buttons) changes the editor the same way. Other scripts reach the
// editor through window.quireEditor (attach.js inserts uploaded files at
// its cursor).
//
// When the form carries data-live (the URL of the document's live
// WebSocket), the editor joins the live session (live.js).
//
// CSP: CodeMirror adds <style> elements; the page's style-src allows them
// only with the nonce this script tag carries (EditorView.cspNonce). No
// style attributes are set from here.
import { EditorState, Compartment } from "@codemirror/state";
import { EditorView, keymap } from "@codemirror/view";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { markdown } from "@codemirror/lang-markdown";
import { syntaxHighlighting } from "@codemirror/language";
import { classHighlighter } from "@lezer/highlight";
import { startLive } from "./live.js";
import { remoteCursors } from "./cursors.js";
import { minimalChange } from "./diff.js";

const script = document.currentScript;
const nonce = (script && script.nonce) || "";

function init() {
  const form = document.getElementById("doc-form");
  const area = document.getElementById("content");
  if (!form || !area || area.tagName !== "TEXTAREA" || window.quireEditor) {
    return;
  }
  const live = form.getAttribute("data-live") || "";
  const readOnly = new Compartment();
  let writing = false; // the editor is writing into the textarea

  // base are the editor's extensions; live editing adds its own.
  const base = [
    history(),
    keymap.of([...defaultKeymap, ...historyKeymap]),
    markdown(),
    // Classes (tok-heading, tok-link, ...) coloured by style.css, in both
    // colour schemes, rather than CodeMirror's light-only default colours.
    syntaxHighlighting(classHighlighter),
    EditorView.lineWrapping,
    remoteCursors(),
    readOnly.of([]),
    EditorView.cspNonce.of(nonce),
    EditorView.contentAttributes.of(contentAttributes(area)),
    EditorView.updateListener.of((u) => {
      if (u.docChanged) {
        toTextarea(u.state);
      }
    }),
  ];

  function toTextarea(state) {
    writing = true;
    try {
      area.value = state.doc.toString();
      area.dispatchEvent(new Event("input", { bubbles: true }));
    } finally {
      writing = false;
    }
  }

  const view = new EditorView({
    state: EditorState.create({ doc: area.value, extensions: base }),
  });
  view.dom.classList.add("editor");
  area.insertAdjacentElement("afterend", view.dom);
  area.hidden = true;
  area.classList.add("replaced-by-editor");

  // The textarea's label focuses the editor.
  const label = form.querySelector("label[for='content']");
  if (label) {
    label.addEventListener("click", (ev) => {
      ev.preventDefault();
      view.focus();
    });
  }

  // A script set the textarea (a restored draft, "Put their text in the
  // editor"): the editor follows as one change.
  area.addEventListener("input", () => {
    if (writing) {
      return;
    }
    const now = view.state.doc.toString();
    if (area.value !== now) {
      view.dispatch({ changes: minimalChange(now, area.value), userEvent: "input.replace" });
    }
  });

  const api = {
    view,
    dom: view.dom,
    focus() {
      view.focus();
    },
    text() {
      return view.state.doc.toString();
    },
    // selection is the main selection, in UTF-16 offsets of text().
    selection() {
      const r = view.state.selection.main;
      return { from: r.from, to: r.to };
    },
    // replace puts text over [from, to) as typing would, and moves the
    // cursor after it.
    replace(from, to, text) {
      const len = view.state.doc.length;
      from = Math.max(0, Math.min(from, len));
      to = Math.max(from, Math.min(to, len));
      view.dispatch({
        changes: { from, to, insert: text },
        selection: { anchor: from + text.length },
        userEvent: "input.paste",
        scrollIntoView: true,
      });
    },
    setReadOnly(on) {
      view.dispatch({
        effects: readOnly.reconfigure(on ? [EditorState.readOnly.of(true), EditorView.editable.of(false)] : []),
      });
    },
    // syncTextarea writes the editor's text into the form's field.
    syncTextarea() {
      toTextarea(view.state);
    },
    // unsent counts the changes not yet confirmed by the live session
    // (0 without one).
    unsent() {
      return 0;
    },
  };
  window.quireEditor = api;

  if (live) {
    startLive({
      url: live,
      form,
      view,
      base,
      api,
      storageKey: "quire.live." + (form.getAttribute("data-draft-key") || live),
    });
  }
}

// contentAttributes carries the textarea's label and error description
// over to the editor's editable element.
function contentAttributes(area) {
  const attrs = { "aria-multiline": "true", role: "textbox" };
  const label = document.querySelector("label[for='content']");
  if (label) {
    if (!label.id) {
      label.id = "content-label";
    }
    attrs["aria-labelledby"] = label.id;
  }
  for (const name of ["aria-invalid", "aria-describedby"]) {
    const v = area.getAttribute(name);
    if (v) {
      attrs[name] = v;
    }
  }
  if (area.getAttribute("spellcheck") === "true") {
    attrs.spellcheck = "true";
  }
  return attrs;
}

if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", init);
} else {
  // Loaded with defer, this runs before DOMContentLoaded and before the
  // deferred scripts after it (attach.js): the editor is in place when
  // they, draft.js and preview.js look for it.
  init();
}
