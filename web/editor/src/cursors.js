// Remote cursors and selections: where the others in a live session
// are, with their names. live.js sets them with setRemoteCursors; they
// follow the text's changes until the next update. Colours come from a
// small set of classes (style.css), never from a style attribute (CSP).
import { StateEffect, StateField, RangeSetBuilder } from "@codemirror/state";
import { Decoration, EditorView, WidgetType } from "@codemirror/view";

export const COLOURS = 6;

// setRemoteCursors replaces the shown cursors: a list of
// {client, name, anchor, head}, positions in the current document.
export const setRemoteCursors = StateEffect.define();

// colour picks a stable colour class for a client id.
export function colour(id) {
  let h = 0;
  for (let i = 0; i < id.length; i++) {
    h = (h * 31 + id.charCodeAt(i)) | 0;
  }
  return "cm-remote-c" + (Math.abs(h) % COLOURS);
}

class Caret extends WidgetType {
  constructor(name, cls) {
    super();
    this.name = name;
    this.cls = cls;
  }
  eq(other) {
    return other.name === this.name && other.cls === this.cls;
  }
  toDOM() {
    const caret = document.createElement("span");
    caret.className = "cm-remote-caret " + this.cls;
    caret.setAttribute("aria-hidden", "true");
    const label = document.createElement("span");
    label.className = "cm-remote-name";
    label.textContent = this.name;
    caret.appendChild(label);
    return caret;
  }
  ignoreEvent() {
    return true;
  }
}

function clamp(n, len) {
  n = Number.isInteger(n) ? n : 0;
  return Math.max(0, Math.min(n, len));
}

function build(cursors, len) {
  const marks = [];
  for (const c of cursors) {
    const cls = colour(String(c.client));
    const anchor = clamp(c.anchor, len), head = clamp(c.head, len);
    const from = Math.min(anchor, head), to = Math.max(anchor, head);
    if (from < to) {
      marks.push(Decoration.mark({ class: "cm-remote-selection " + cls }).range(from, to));
    }
    marks.push(Decoration.widget({ widget: new Caret(String(c.name || "Someone"), cls), side: 1 }).range(head));
  }
  marks.sort((a, b) => a.from - b.from || a.value.startSide - b.value.startSide);
  const b = new RangeSetBuilder();
  for (const m of marks) {
    b.add(m.from, m.to, m.value);
  }
  return b.finish();
}

const field = StateField.define({
  create() {
    return Decoration.none;
  },
  update(set, tr) {
    set = set.map(tr.changes);
    for (const e of tr.effects) {
      if (e.is(setRemoteCursors)) {
        set = build(e.value, tr.state.doc.length);
      }
    }
    return set;
  },
  provide: (f) => EditorView.decorations.from(f),
});

export function remoteCursors() {
  return field;
}
