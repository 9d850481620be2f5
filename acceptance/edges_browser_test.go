package acceptance

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"quire/documents"
)

// wideTableJS reports what is wrong with the document's tables at the
// viewport's width: a word of a cell broken across lines, the page (not
// the table) scrolling sideways, a table wider than the page, and whether
// some table scrolls in its own box (last entry, "scrolls: true|false").
const wideTableJS = `(() => {` + brokenWordsJS + `
  const out = [];
  const w = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > w) out.push('the page scrolls sideways: ' + document.documentElement.scrollWidth + ' > ' + w);
  let scrolls = false;
  for (const table of document.querySelectorAll('#doc-body table')) {
    const r = table.getBoundingClientRect();
    if (r.right > w + 0.5) out.push('a table ends at ' + r.right + ' beyond the page ' + w);
    if (table.scrollWidth > table.clientWidth + 1) scrolls = true;
    brokenWords(table.querySelectorAll('th, td'), out);
  }
  out.push('scrolls: ' + scrolls);
  return out;
})()`

// TestBrowserWideTableScrollsInItsOwnBox: a document's table with more
// columns than the page is wide scrolls sideways in its own box, at a
// laptop's width and a phone's, and no word of a cell is broken inside
// (the "Responsibili / ty" at 1280 px, four lines a word at 390).
func TestBrowserWideTableScrollsInItsOwnBox(t *testing.T) {
	ctx := newChrome(t)
	e, people := demoEnv(t)
	header := "| Responsibility | Accountability | Documentation | Infrastructure | Availability | Observability | Maintainability | Interoperability |"
	row := "| Runbooks and escalation | On-call engineer | Architecture decision records | Kubernetes clusters | Ninety-nine point nine | Dashboards and alerts | Code review | Public APIs |"
	doc := e.document(people["grace"], documents.DocumentInput{Title: documents.Some("Ownership matrix"),
		Content: documents.Some("# Owners\n\n" + header + "\n|" + strings.Repeat(" --- |", 8) + "\n" + row + "\n" + row + "\n")})
	do(t, ctx, "sign in", signInByCookie(e, "grace@example.com", testPassword))
	for _, width := range []int64{1280, 390} {
		do(t, ctx, "open the document", chromedp.EmulateViewport(width, 860),
			chromedp.Navigate(e.server.URL+"/documents/"+doc.ID), waitVisible(id("doc-body")))
		got := read(t, ctx, "tables", chromedp.Evaluate[[]string](wideTableJS))
		if len(got) == 0 || got[len(got)-1] != "scrolls: true" {
			t.Errorf("at %d px no table scrolls in its own box: %q", width, got)
		}
		if bad := got[:max(len(got)-1, 0)]; len(bad) > 0 {
			t.Errorf("at %d px:\n%s", width, strings.Join(bad, "\n"))
		}
	}
}

// TestBrowserTokenScopeRadiosSitBesideTheirLabels: each scope's radio
// button is on the line of its label's text, before it, not centred on a
// line of its own above it.
func TestBrowserTokenScopeRadiosSitBesideTheirLabels(t *testing.T) {
	ctx := newChrome(t)
	e, _ := demoEnv(t)
	do(t, ctx, "sign in", signInByCookie(e, "grace@example.com", testPassword))
	for _, width := range []int64{1280, 390} {
		do(t, ctx, "account", chromedp.EmulateViewport(width, 860),
			chromedp.Navigate(e.server.URL+"/account"), waitVisible(id("token-form")))
		bad := read(t, ctx, "radios", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#token-form input[type=radio]')).flatMap((radio) => {
  const label = radio.closest('label');
  const text = Array.from(label.childNodes).find((n) => n.nodeType === 3 && n.textContent.trim() !== '');
  const range = document.createRange();
  range.selectNodeContents(text);
  const first = Array.from(range.getClientRects()).filter((x) => x.width > 0)[0];
  const r = radio.getBoundingClientRect();
  const mid = (r.top + r.bottom) / 2;
  const out = [];
  if (r.width > 40) out.push(radio.id + ' is ' + r.width + ' px wide');
  if (mid < first.top || mid > first.bottom) out.push(radio.id + ' is not on the line of its label (' + mid + ' outside ' + first.top + '-' + first.bottom + ')');
  if (r.right > first.left + 0.5) out.push(radio.id + ' is not before its label (' + r.right + ' > ' + first.left + ')');
  return out;
})`))
		if len(bad) > 0 {
			t.Errorf("at %d px:\n%s", width, strings.Join(bad, "\n"))
		}
	}
}
