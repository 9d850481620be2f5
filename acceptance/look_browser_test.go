package acceptance

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/documents"
)

// How the pages look, checked in the browser: contrast in both colour
// schemes, narrow screens, and comparing two versions.

// contrastJS lists every visible text and control of the page whose
// contrast with its effective background is below WCAG AA: 4.5:1, or 3:1
// for large text (24px, or 18.66px bold). The background is the stack of
// the element's and its ancestors' background colours down to the first
// opaque one; text colours with alpha are blended over it. Placeholders of
// empty fields are checked as text too.
const contrastJS = `(() => {
  const parse = (s) => {
    const m = s.match(/rgba?\(([^)]*)\)/);
    if (!m) return null;
    const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1};
  };
  const over = (top, bottom) => ({
    r: top.r * top.a + bottom.r * (1 - top.a),
    g: top.g * top.a + bottom.g * (1 - top.a),
    b: top.b * top.a + bottom.b * (1 - top.a), a: 1,
  });
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0) { layers.push(c); if (c.a >= 1) break; }
    }
    let bg = {r: 255, g: 255, b: 255, a: 1};
    if (matchMedia('(prefers-color-scheme: dark)').matches) bg = {r: 18, g: 18, b: 18, a: 1};
    for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
    return bg;
  };
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
  };
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2 || r.right <= 0 || r.bottom <= 0) return false;
    for (let e = el; e; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (s.display === 'none' || s.visibility === 'hidden' || parseFloat(s.opacity) === 0) return false;
    }
    return true;
  };
  const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : '');
  const bad = [];
  const check = (el, colour, what, text) => {
    const s = getComputedStyle(el);
    const c = parse(colour);
    if (!c) return;
    const bg = background(el);
    const fg = c.a < 1 ? over(c, bg) : c;
    const size = parseFloat(s.fontSize), bold = parseInt(s.fontWeight, 10) >= 700;
    const need = (size >= 24 || (size >= 18.66 && bold)) ? 3 : 4.5;
    const got = ratio(fg, bg);
    if (got < need) {
      bad.push(name(el) + ' ' + what + ' "' + text.trim().slice(0, 30) + '" ' + got.toFixed(2) + ':1 < ' + need + ':1 (' + colour + ' on ' +
        'rgb(' + [bg.r, bg.g, bg.b].map(Math.round).join(', ') + '))');
    }
  };
  for (const el of document.body.querySelectorAll('*')) {
    if (el.closest('head, script, style, noscript, option') || el.disabled || !shown(el)) continue;
    const tag = el.tagName;
    if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || tag === 'BUTTON') {
      if (['hidden', 'checkbox', 'radio', 'file', 'color', 'range'].includes(el.type) && tag === 'INPUT') continue;
      const value = tag === 'SELECT' ? (el.selectedOptions[0] || {}).textContent || '' : (el.value || el.textContent || '');
      if (value.trim() !== '') check(el, getComputedStyle(el).color, 'control', value);
      if ((tag === 'INPUT' || tag === 'TEXTAREA') && el.placeholder && el.value === '') {
        check(el, getComputedStyle(el, '::placeholder').color, 'placeholder', el.placeholder);
      }
      continue;
    }
    const text = Array.from(el.childNodes).filter((n) => n.nodeType === 3).map((n) => n.textContent).join('');
    if (text.trim() !== '') check(el, getComputedStyle(el).color, 'text', text);
  }
  return bad;
})()`

// scheme emulates prefers-color-scheme: light or dark.
func scheme(value string) action {
	return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: value}},
		})
		return err
	})
}

// lookEnv is the demo with a document that has three versions (a changed
// word among them), a folder that holds something, a flash and an error to
// show.
func lookEnv(t *testing.T) (*env, quire.User, *quire.Document) {
	e, people := demoEnv(t)
	grace := people["grace"]
	doc := e.document(grace, documents.DocumentInput{Title: documents.Some("Release checklist"),
		Content: documents.Some("# Release\n\nTag the build.\nRun the smoke tests on staging.\nAnnounce it.")})
	for _, c := range []string{
		"# Release\n\nTag the build.\nRun the smoke tests on production.\nAnnounce it.",
		"# Release\n\nTag the build.\nRun the smoke tests on production.\nAnnounce it in #releases.\nClose the milestone.",
	} {
		e.clock.Advance(time.Minute)
		if _, err := e.docs.Update(context.Background(), e.actor(grace), doc.ID, documents.DocumentInput{Content: documents.Some(c)}, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	e.document(grace, documents.DocumentInput{Title: documents.Some("Links here"), Content: documents.Some("See [the checklist](/documents/" + doc.ID + ").")})
	return e, grace, doc
}

func TestBrowserContrast(t *testing.T) {
	ctx := newChrome(t)
	e, _, doc := lookEnv(t)
	folders, err := e.store.Folders(context.Background())
	if err != nil || len(folders) == 0 {
		t.Fatalf("folders: %v", err)
	}
	var full string // a folder with documents, whose delete is refused
	for _, f := range folders {
		if _, n, err := e.store.ListDocuments(context.Background(), quire.DocumentFilter{Visibility: quire.Visibility{All: true},
			FolderID: f.ID, Limit: 1}); err == nil && n > 0 {
			full = f.ID
		}
	}
	pages := []struct {
		name, path string
		then       []action
	}{
		{"documents", "/documents?search=incident", nil},
		{"a document", "/documents/" + doc.ID, nil},
		{"the editor", "/documents/" + doc.ID + "/edit", nil},
		{"a new document", "/documents/new", nil},
		{"versions", "/documents/" + doc.ID + "/versions", nil},
		{"a comparison", "/documents/" + doc.ID + "/compare?from=1&to=3", nil},
		{"a version against the current", "/documents/" + doc.ID + "/versions/1/diff", nil},
		{"folders", "/folders", nil},
		{"a refused folder delete", "/folders/" + full, []action{
			chromedp.Click(id("delete-folder-button")), waitVisible(id("delete-refused"))}},
		{"a saved document's flash", "/documents/" + doc.ID + "/edit", []action{
			chromedp.Click(id("save-document")), waitVisible(css(".flash"))}},
		{"the trash", "/trash", nil},
		{"the account", "/account", nil},
		{"a page that does not exist", "/nowhere", nil},
	}
	for _, sch := range []string{"light", "dark"} {
		t.Run(sch, func(t *testing.T) {
			// The light scheme in the test's own tab, the dark one in a
			// second session (signed out, as the sign-in page needs):
			// one browser context fewer than a session for each.
			tab := ctx
			if sch == "dark" {
				tab = newSession(t, ctx)
			}
			do(t, tab, "sign-in page", scheme(sch), chromedp.Navigate(e.server.URL+"/login"), waitVisible(id("sign-in")))
			got := map[string][]string{}
			if bad := read(t, tab, "contrast", chromedp.Evaluate[[]string](contrastJS)); len(bad) > 0 {
				got["the sign-in page"] = bad
			}
			do(t, tab, "sign in", signInByCookie(e, "grace@example.com", testPassword))
			for _, p := range pages {
				steps := append([]action{chromedp.Navigate(e.server.URL + p.path), waitReady(css("footer"))}, p.then...)
				do(t, tab, p.name, steps...)
				if bad := read(t, tab, "contrast", chromedp.Evaluate[[]string](contrastJS)); len(bad) > 0 {
					got[p.name] = bad
				}
			}
			if sch == "dark" {
				do(t, tab, "dark screenshot", chromedp.Navigate(e.server.URL+"/documents/"+doc.ID+"/compare?from=1&to=3"),
					waitVisible(css("table.diff")), screenshot("dark.png"))
			}
			if diff := cmp.Diff(map[string][]string{}, got); diff != "" {
				t.Errorf("text below WCAG AA contrast in the %s scheme (-want +got):\n%s", sch, diff)
			}
		})
	}
}

// brokenWordsJS defines brokenWords(cells, out), which adds to out each
// word of the cells' text that the browser broke across lines.
const brokenWordsJS = `
  function brokenWords(cells, out) {
    for (const cell of cells) {
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const re = /\S+/g;
        let m;
        while ((m = re.exec(n.textContent))) {
          const range = document.createRange();
          range.setStart(n, m.index);
          range.setEnd(n, m.index + m[0].length);
          const tops = new Set(Array.from(range.getClientRects()).filter((x) => x.width > 0).map((x) => Math.round(x.top)));
          if (tops.size > 1) out.push('"' + m[0] + '" is broken across ' + tops.size + ' lines');
        }
      }
    }
  }
`

// overflowJS reports, for the page at the current width, what sticks out:
// elements of main whose box ends right of the viewport (the page would
// scroll sideways, hiding them), and words of table cells and headers
// broken across lines.
const overflowJS = `(() => {` + brokenWordsJS + `
  const out = [];
  const w = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > w) out.push('the page scrolls sideways: ' + document.documentElement.scrollWidth + ' > ' + w);
  for (const el of document.querySelectorAll('main th, main td, main td a, main td button')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0) continue;
    if (r.right > w + 0.5 || r.left < -0.5) out.push(el.tagName.toLowerCase() + ' "' + el.textContent.trim().slice(0, 20) + '" is off-screen');
  }
  brokenWords(document.querySelectorAll('main table.versions th, main table.versions td, main table.changes th'), out);
  return out;
})()`

func TestBrowserNarrowScreen(t *testing.T) {
	ctx := newChrome(t)
	e, _, doc := lookEnv(t)
	do(t, ctx, "a phone's width", chromedp.EmulateViewport(390, 844), signInByCookie(e, "grace@example.com", testPassword))
	for _, path := range []string{
		"/documents/" + doc.ID + "/versions",
		"/documents/" + doc.ID + "/compare?from=1&to=3",
		"/documents/" + doc.ID + "/versions/1/diff",
		"/documents/" + doc.ID,
		"/documents",
	} {
		do(t, ctx, path, chromedp.Navigate(e.server.URL+path), waitReady(css("footer")))
		if bad := read(t, ctx, "overflow", chromedp.Evaluate[[]string](overflowJS)); len(bad) > 0 {
			t.Errorf("%s at 390 px:\n%s", path, strings.Join(bad, "\n"))
		}
	}
	// Every version's author, comparison and restore are on screen.
	do(t, ctx, "versions", chromedp.Navigate(e.server.URL+"/documents/"+doc.ID+"/versions"), waitVisible(id("versions")))
	got := read(t, ctx, "labels", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#version-1 td')).map(td =>
		td.innerText.replace(/\s+/g, ' ').trim())`))
	want := []string{"Version 1", "Title Release checklist", "Status Draft", "", "By Grace", "Compare with current Restore"}
	if len(got) != len(want) {
		t.Fatalf("cells of version 1: %q", got)
	}
	if !strings.HasPrefix(got[3], "Saved ") {
		t.Errorf("the time of version 1 has no label: %q", got[3])
	}
	got[3] = ""
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cells of version 1, each with its label (-want +got):\n%s", diff)
	}
}

func TestBrowserCompareVersions(t *testing.T) {
	ctx := newChrome(t)
	e, _, doc := lookEnv(t)
	do(t, ctx, "sign in", signInByCookie(e, "grace@example.com", testPassword))
	do(t, ctx, "choose two versions and compare",
		chromedp.Navigate(e.server.URL+"/documents/"+doc.ID+"/versions"),
		waitVisible(id("compare-form")),
		chromedp.SetValue(id("compare-from"), "1"),
		chromedp.SetValue(id("compare-to"), "3"),
		chromedp.Click(id("compare-submit")),
		waitVisible(css("table.diff")),
		screenshot("compare.png"),
	)
	loc := read(t, ctx, "location", chromedp.Location())
	rows := read(t, ctx, "rows", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('table.diff tr.del td.code, table.diff tr.ins td.code')).map(td => td.innerHTML)`))
	want := []string{
		"Run the smoke tests on <del>staging</del>.",
		"Announce it.",
		"Run the smoke tests on <ins>production</ins>.",
		"Announce it<ins> in #releases</ins>.",
		"Close the milestone.",
	}
	if diff := cmp.Diff(want, rows); diff != "" || !strings.HasSuffix(loc, fmt.Sprintf("/documents/%s/compare?from=1&to=3", doc.ID)) {
		t.Errorf("at %s, changed lines (-want +got):\n%s", loc, diff)
	}
}
