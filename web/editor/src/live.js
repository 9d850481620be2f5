// Live editing: the editor as a peer of @codemirror/collab against the
// server's WebSocket (GET /documents/{id}/live, README "Live editing").
//
// The server holds the text and a count of its changes. This peer sends
// its changes with the count they were made on ("push"), takes the
// server's changes in order ("updates"; its own come back with its client
// id, which confirms them) and rebases what it has not had confirmed. It
// trusts nothing it receives: a change that does not fit the text it has
// at that count, or a gap in the counts, makes it ask for the whole text
// again; cursor positions are mapped and clamped.
//
// Nothing typed is lost: the unconfirmed changes, the count and the text
// they were made on are kept in localStorage (beside the kept draft) as
// they are made, and sent again after a reconnect or a reload. When the
// server answers a reconnect with the whole text (it can no longer give
// the changes since that count), the unconfirmed changes are mapped onto
// it through the difference between the two texts: what was typed is
// kept, placed at the nearest unchanged spot. Each change pushed carries
// this peer's own number (seq, kept with the changes); the whole text
// comes with the number of the last change the server had accepted from
// this peer, and the changes up to it are dropped first: one accepted
// whose confirmation was lost (the connection broke in between) is not
// applied twice.
import { ChangeSet, EditorState, Transaction } from "@codemirror/state";
import { EditorView } from "@codemirror/view";
import { collab, getSyncedVersion, receiveUpdates, sendableUpdates } from "@codemirror/collab";
import { setRemoteCursors } from "./cursors.js";
import { minimalChange } from "./diff.js";

export const MAX_MESSAGE = 64 * 1024; // bytes of one frame, either way
export const MAX_UPDATES = 100; // updates in one push
const CURSOR_DELAY = 150; // ms after the last move
const SAVE_DELAY = 300; // ms after the last change
const MAX_BACKOFF = 15000; // ms

const encoder = new TextEncoder();
function bytes(s) {
  return encoder.encode(s).length;
}

function randomID() {
  const a = new Uint8Array(16);
  window.crypto.getRandomValues(a);
  return Array.from(a, (b) => b.toString(16).padStart(2, "0")).join("");
}

function storage() {
  try {
    const s = window.localStorage;
    s.setItem("quire.probe", "1");
    s.removeItem("quire.probe");
    return s;
  } catch (e) {
    return null;
  }
}

// composeAll composes the changes made one after another on a text.
function composeAll(changes, length) {
  return changes.reduce((a, c) => a.compose(c), ChangeSet.empty(length));
}

function person(p) {
  return p && typeof p === "object" && typeof p.name === "string" ? p.name : "";
}

export function startLive(o) {
  const live = new Live(o);
  live.start();
  return live;
}

class Live {
  constructor(o) {
    this.url = o.url;
    this.form = o.form;
    this.view = o.view;
    this.base = o.base;
    this.api = o.api;
    this.key = o.storageKey;
    this.local = storage();
    this.clientID = randomID();
    this.seq = 1; // the number of the first unconfirmed change
    this.started = false; // the editor holds the live text at a count
    this.confirmed = null; // Text: the live text at getSyncedVersion
    this.ws = null;
    this.open = false;
    this.inFlight = 0; // updates pushed and not yet confirmed or refused
    this.batch = MAX_UPDATES;
    this.readonly = false;
    this.dropUnsent = false; // the server refused them as invalid
    this.stopped = false;
    this.attempts = 0;
    this.retry = 0; // the timer of the next connection
    this.cursorTimer = 0;
    this.saveTimer = 0;
    this.fresh = false; // ask for the whole text on the next hello
    this.status = this.element("live-status", "p", "live-status");
    this.status.setAttribute("role", "status");
    this.status.setAttribute("aria-live", "polite");
    this.presence = this.element("live-presence", "p", "live-presence muted");
    this.fields = this.otherFields(); // the form's other fields, as loaded
    this.waiting = ""; // "stay" or "leave": Save waits for the server
    // follower: the page of someone who may only view the document
    // (data-follow): the server makes it read-only; it has no Save.
    this.follower = this.form.hasAttribute("data-follow");
  }

  // otherFields are the form's fields but the content and the hidden
  // ones, as one string: what the live session does not carry.
  otherFields() {
    const out = [];
    for (const el of Array.from(this.form.elements)) {
      if (!el.name || el.name === "content" || el.type === "hidden" || el.type === "submit" || el.type === "button") {
        continue;
      }
      out.push([el.name, el.value]);
    }
    return JSON.stringify(out);
  }

  // onSubmit: with live editing the content is saved by the server (a
  // version when editing pauses and when the last editor leaves), and the
  // form's baseUpdatedAt goes stale at each such version: the form is not
  // posted for the content. Save waits until every change is confirmed,
  // then goes to the document's page. When another field changed (title,
  // tags, ...) the classic form is posted, guarded as always.
  onSubmit(ev) {
    if (this.stopped || this.otherFields() !== this.fields) {
      return;
    }
    ev.preventDefault();
    ev.stopImmediatePropagation();
    this.waitSent("leave");
  }

  // onSaveKey: Ctrl+S / Cmd+S in live mode confirms that everything is
  // on the server (it waits for it) and stays; preview.js would post.
  onSaveKey(ev) {
    const s = ev.key === "s" || ev.key === "S";
    if (!s || !(ev.ctrlKey || ev.metaKey) || ev.altKey || ev.shiftKey) {
      return;
    }
    if (this.follower) {
      return; // a follower has nothing to save (preview.js keeps the key from the browser)
    }
    if (this.stopped || this.otherFields() !== this.fields) {
      return;
    }
    ev.preventDefault();
    ev.stopImmediatePropagation();
    if (!ev.repeat) {
      this.waitSent("stay");
    }
  }

  waitSent(then) {
    if (this.waiting !== "leave") {
      this.waiting = then;
    }
    this.checkSent();
  }

  // checkSent ends a wait of Save once nothing is unconfirmed.
  checkSent() {
    if (!this.waiting) {
      return;
    }
    if (!this.started || !this.open || this.unsentCount() > 0) {
      if (this.open) {
        this.say("Sending your changes…");
      } else {
        this.lost();
      }
      return;
    }
    const then = this.waiting;
    this.waiting = "";
    if (then === "leave") {
      this.save();
      window.location.assign(this.form.getAttribute("action") || "/documents");
      return;
    }
    this.say("Saved live: all your changes are on the server. It keeps a version when editing pauses for 30 seconds and when the last editor leaves.");
  }

  element(id, tag, cls) {
    let el = document.getElementById(id);
    if (!el) {
      el = document.createElement(tag);
      el.id = id;
      el.className = cls;
      this.view.dom.insertAdjacentElement("afterend", el);
    }
    el.hidden = false;
    return el;
  }

  say(text, problem) {
    // The same words again are not set again: a screen reader would read
    // them out at every change that arrives.
    if (this.status.textContent === text) {
      return;
    }
    this.status.textContent = text;
    this.status.classList.toggle("live-problem", !!problem);
  }

  start() {
    this.api.unsent = () => (this.started ? sendableUpdates(this.view.state).length : 0);
    if (!this.restore()) {
      // Until the server's text arrives, the page's text is not the live one.
      this.api.setReadOnly(true);
    }
    this.say("Connecting to the live session…");
    this.form.addEventListener("submit", (ev) => this.onSubmit(ev), true);
    document.addEventListener("keydown", (ev) => this.onSaveKey(ev), true);
    window.addEventListener("offline", () => {
      this.lost();
      if (this.ws) {
        this.ws.close(4000, "offline");
      }
    });
    window.addEventListener("online", () => {
      if (!this.ws && !this.stopped) {
        clearTimeout(this.retry);
        this.connect();
      }
    });
    window.addEventListener("pagehide", () => this.save());
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "hidden") {
        this.save();
      }
    });
    this.connect();
  }

  // extensions are the editor's, plus the collab peer at a count.
  extensions(version) {
    return [
      this.base,
      collab({ startVersion: version, clientID: this.clientID }),
      EditorView.updateListener.of((u) => {
        if (u.transactions.some((tr) => tr.docChanged && !tr.annotation(Transaction.remote))) {
          this.changed();
        }
        if (u.selectionSet || u.docChanged) {
          this.cursorLater();
        }
      }),
    ];
  }

  // reset puts text at version in the editor, then the unsent changes
  // (made on that text) on top as local, unconfirmed changes.
  reset(text, version, unsent) {
    const sel = this.view.state.selection.main;
    const state = EditorState.create({ doc: text, extensions: this.extensions(version) });
    this.view.setState(state);
    this.confirmed = state.doc;
    for (const cs of unsent) {
      if (cs.length !== this.view.state.doc.length) {
        break;
      }
      this.view.dispatch({ changes: cs, userEvent: "input" });
    }
    const len = this.view.state.doc.length;
    this.view.dispatch({ selection: { anchor: Math.min(sel.anchor, len), head: Math.min(sel.head, len) } });
    this.api.setReadOnly(this.readonly);
    this.api.syncTextarea();
    this.started = true;
  }

  // restore takes the unconfirmed changes kept by an earlier page, if
  // any: the editor starts from the text they were made on.
  restore() {
    if (!this.local) {
      return false;
    }
    let kept;
    try {
      kept = JSON.parse(this.local.getItem(this.key) || "null");
    } catch (e) {
      kept = null;
    }
    if (!kept || kept.v !== 1 || typeof kept.base !== "string" || !Number.isInteger(kept.version) ||
      kept.version < 0 || !Array.isArray(kept.updates) || typeof kept.client !== "string" || kept.client.length > 64) {
      return false;
    }
    const unsent = [];
    let len = kept.base.length;
    try {
      for (const u of kept.updates) {
        const cs = ChangeSet.fromJSON(u);
        if (cs.length !== len) {
          break;
        }
        len = cs.newLength;
        unsent.push(cs);
      }
    } catch (e) {
      // what parsed is kept
    }
    // The same client id: changes the server took before the page went
    // come back as this peer's, which confirms them instead of repeating.
    this.clientID = kept.client;
    this.seq = Number.isSafeInteger(kept.seq) && kept.seq > 0 ? kept.seq : 1;
    this.reset(kept.base, kept.version, unsent);
    return true;
  }

  save() {
    clearTimeout(this.saveTimer);
    this.saveTimer = 0;
    if (!this.local || !this.started) {
      return;
    }
    const unsent = sendableUpdates(this.view.state);
    try {
      if (!unsent.length) {
        this.local.removeItem(this.key);
        return;
      }
      this.local.setItem(this.key, JSON.stringify({
        v: 1,
        client: this.clientID,
        seq: this.seq,
        version: getSyncedVersion(this.view.state),
        base: this.confirmed.toString(),
        updates: unsent.map((u) => u.changes.toJSON()),
        savedAt: Date.now(),
      }));
    } catch (e) {
      // a full storage: the draft (draft.js) still holds the text
    }
  }

  changed() {
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => this.save(), SAVE_DELAY);
    this.push();
    if (!this.open) {
      this.lost();
    }
  }

  connect() {
    this.retry = 0;
    if (this.stopped) {
      return;
    }
    let ws;
    try {
      const u = new URL(this.url, window.location.href);
      u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
      ws = new WebSocket(u.href);
    } catch (e) {
      this.closed(1006);
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      if (this.ws !== ws) {
        return;
      }
      this.open = true;
      const version = this.started && !this.fresh ? getSyncedVersion(this.view.state) : null;
      this.fresh = false;
      this.send({ type: "hello", version, client: this.clientID });
    };
    ws.onmessage = (ev) => {
      if (this.ws !== ws || typeof ev.data !== "string") {
        return;
      }
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch (e) {
        return;
      }
      if (msg && typeof msg === "object") {
        this.receive(msg);
      }
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) {
        return;
      }
      this.ws = null;
      this.open = false;
      this.inFlight = 0;
      this.closed(ev.code);
    };
  }

  send(msg) {
    if (!this.ws || !this.open) {
      return false;
    }
    try {
      this.ws.send(typeof msg === "string" ? msg : JSON.stringify(msg));
      return true;
    } catch (e) {
      return false;
    }
  }

  unsentCount() {
    return this.started ? sendableUpdates(this.view.state).length : 0;
  }

  lost() {
    const n = this.unsentCount();
    this.say("Connection lost. " + (n ? "Your changes not yet sent are kept in this browser and will be sent" :
      "Reconnecting; what you type is kept and sent") + " when the connection is back.", true);
  }

  closed(code) {
    if (code === 4403 || code === 4404) {
      this.stopped = true;
      this.readonly = true;
      this.api.setReadOnly(true);
      this.save();
      this.say(code === 4403 ?
        "You no longer have access to this document: live editing has stopped. Anything you had not sent is kept in this browser." :
        "This document was moved to the trash: live editing has stopped.", true);
      return;
    }
    this.lost();
    let delay;
    if (code === 1001) {
      delay = 200 + Math.random() * 800; // the server is going away: another node
    } else {
      delay = Math.min(MAX_BACKOFF, 500 * 2 ** this.attempts) * (0.5 + Math.random() / 2);
      this.attempts++;
    }
    clearTimeout(this.retry);
    this.retry = setTimeout(() => this.connect(), delay);
  }

  // resync asks for the whole text: what came did not fit.
  resync() {
    this.fresh = true;
    if (this.ws) {
      this.ws.close(4000, "resync");
    }
  }

  receive(msg) {
    switch (msg.type) {
      case "state":
        this.onState(msg);
        return this.checkSent();
      case "updates":
        this.onUpdates(msg);
        return this.checkSent();
      case "refused":
        return this.onRefused(msg);
      case "presence":
        return this.onPresence(msg);
      case "cursors":
        return this.onCursors(msg);
    }
  }

  connected() {
    this.attempts = 0;
    if (this.readonly) {
      this.say("You are following this document live, read-only.");
    } else {
      this.say("Live: your changes are shared as you type.");
    }
  }

  onState(msg) {
    if (typeof msg.text !== "string" || !Number.isInteger(msg.version) || msg.version < 0) {
      return;
    }
    const keep = [];
    if (this.started) {
      let unsent = sendableUpdates(this.view.state).map((u) => u.changes);
      let base = this.confirmed;
      // The server had accepted the changes up to msg.seq: the text holds
      // them already.
      const accepted = Number.isSafeInteger(msg.seq) ? msg.seq : 0;
      if (accepted >= this.seq) {
        const k = Math.min(accepted - this.seq + 1, unsent.length);
        base = unsent.slice(0, k).reduce((doc, cs) => cs.apply(doc), base);
        unsent = unsent.slice(k);
        this.seq = accepted + 1;
      }
      if (this.dropUnsent) {
        this.seq += unsent.length;
        unsent = [];
      }
      const mine = unsent.reduce((doc, cs) => cs.apply(doc), base).toString();
      if (unsent.length && msg.text !== mine) {
        // Rebase the rest on the server's text through the difference
        // between the text they were made on and that one, one by one.
        const from = base.toString();
        let theirs = ChangeSet.of(minimalChange(from, msg.text), from.length);
        for (const cs of unsent) {
          keep.push(cs.map(theirs));
          theirs = theirs.map(cs, true);
        }
      }
    }
    this.dropUnsent = false;
    this.readonly = msg.readonly === true;
    this.inFlight = 0;
    this.reset(msg.text, msg.version, keep);
    this.you = msg.you;
    this.connected();
    this.save();
    this.push();
  }

  onUpdates(msg) {
    if (!this.started) {
      return;
    }
    if (!Number.isInteger(msg.version) || !Array.isArray(msg.updates)) {
      return this.resync();
    }
    const synced = getSyncedVersion(this.view.state);
    if (msg.version > synced) {
      return this.resync(); // changes are missing between
    }
    const list = msg.updates.slice(synced - msg.version);
    const parsed = [];
    let doc = this.confirmed;
    for (const u of list) {
      let cs;
      try {
        cs = ChangeSet.fromJSON(u && u.changes);
      } catch (e) {
        return this.resync();
      }
      if (cs.length !== doc.length) {
        return this.resync();
      }
      doc = cs.apply(doc);
      parsed.push({ changes: cs, clientID: String(u.client) });
    }
    if (parsed.length) {
      const before = sendableUpdates(this.view.state).length;
      this.view.dispatch(receiveUpdates(this.view.state, parsed));
      this.confirmed = doc;
      const mine = before - sendableUpdates(this.view.state).length;
      this.seq += mine;
      this.inFlight = Math.max(0, this.inFlight - mine);
      this.save();
    }
    this.connected();
    this.push();
    this.cursorLater();
  }

  onRefused(msg) {
    this.inFlight = 0;
    switch (msg.reason) {
      case "behind":
        // The changes missed are on their way; after them, push again.
        if (Number.isInteger(msg.version) && msg.version <= getSyncedVersion(this.view.state)) {
          this.push();
        }
        return;
      case "invalid":
        this.dropUnsent = true; // the whole text follows
        return;
      case "repeated":
        // Accepted already: the whole text follows, with the number up to
        // which they are in it.
        return;
      case "too_large":
        if (this.batch > 1) {
          this.batch = 1;
          this.push();
        } else {
          // The text would pass the document size limit.
          this.say("With this change the document would be larger than its size limit: it is not sent, and stays in your editor until you shorten the text.", true);
        }
        return;
      case "readonly":
        this.readonly = true;
        this.api.setReadOnly(true);
        this.save();
        this.say("You can no longer edit this document; you follow it read-only. Anything you had not sent is kept in this browser.", true);
        return;
    }
  }

  push() {
    if (!this.open || !this.started || this.inFlight || this.readonly || this.stopped) {
      return;
    }
    const all = sendableUpdates(this.view.state);
    if (!all.length) {
      return;
    }
    const version = getSyncedVersion(this.view.state);
    let n = Math.min(all.length, MAX_UPDATES, this.batch);
    let text;
    for (;;) {
      text = JSON.stringify({
        type: "push",
        version,
        seq: this.seq,
        updates: all.slice(0, n).map((u) => ({ changes: u.changes.toJSON() })),
      });
      if (n === 1 || bytes(text) <= MAX_MESSAGE) {
        break;
      }
      n = Math.ceil(n / 2);
    }
    if (bytes(text) > MAX_MESSAGE) {
      this.say("A change is too large to send live (more than 64 KiB); it stays in your editor. Paste large texts in smaller parts.", true);
      return;
    }
    if (this.send(text)) {
      this.inFlight = n;
      this.batch = MAX_UPDATES;
    }
  }

  cursorLater() {
    clearTimeout(this.cursorTimer);
    this.cursorTimer = setTimeout(() => this.sendCursor(), CURSOR_DELAY);
  }

  // sendCursor tells where this peer's selection is, in the confirmed
  // text: only when nothing is unconfirmed (the positions then mean the
  // same on the server), and only while editing: a read-only peer's
  // selection is not shown to the others (the server drops it too).
  sendCursor() {
    if (!this.open || !this.started || this.readonly || sendableUpdates(this.view.state).length) {
      return;
    }
    const r = this.view.state.selection.main;
    this.send({ type: "cursor", version: getSyncedVersion(this.view.state), anchor: r.anchor, head: r.head });
  }

  onPresence(msg) {
    const names = (list) => (Array.isArray(list) ? list.map(person).filter(Boolean) : []);
    const viewing = names(msg.viewing), editing = names(msg.editing);
    const parts = [];
    if (editing.length) {
      parts.push("Editing: " + editing.join(", ") + ".");
    }
    if (viewing.length) {
      parts.push("Viewing: " + viewing.join(", ") + ".");
    }
    this.presence.textContent = parts.join(" ");
  }

  onCursors(msg) {
    if (!this.started || !Array.isArray(msg.cursors)) {
      return;
    }
    const state = this.view.state;
    const synced = getSyncedVersion(state);
    const unsent = sendableUpdates(state).map((u) => u.changes);
    const over = composeAll(unsent, this.confirmed.length);
    const shown = [];
    for (const c of msg.cursors.slice(0, 100)) {
      if (!c || c.client === this.clientID || c.version !== synced) {
        continue;
      }
      const len = this.confirmed.length;
      const clamp = (n) => (Number.isInteger(n) ? Math.max(0, Math.min(n, len)) : 0);
      shown.push({
        client: String(c.client),
        name: person(c.user) || "Someone",
        anchor: over.mapPos(clamp(c.anchor), 1),
        head: over.mapPos(clamp(c.head), 1),
      });
    }
    this.view.dispatch({ effects: setRemoteCursors.of(shown) });
  }
}
