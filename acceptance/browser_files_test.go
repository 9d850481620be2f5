package acceptance

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"quire/documents"
)

// diagramPNG is a small picture to paste: a few coloured bars.
func diagramPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 240, 100))
	bars := []color.RGBA{{29, 78, 216, 255}, {180, 35, 24, 255}, {20, 83, 45, 255}, {245, 158, 11, 255}}
	for x := 0; x < 240; x++ {
		for y := 0; y < 100; y++ {
			c := color.RGBA{244, 246, 248, 255}
			if i := x / 60; y > 94-(i+1)*20 && x%60 > 8 {
				c = bars[i]
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

// fileEvent is a script that makes a file of the base64 data and hands it
// to the content field as a paste ("paste") or a drop ("drop") would, then
// returns true.
func fileEvent(kind, name, data string) string {
	mk := `const bytes = Uint8Array.from(atob("` + data + `"), c => c.charCodeAt(0));
		const dt = new DataTransfer();
		dt.items.add(new File([bytes], "` + name + `", {type: "image/png"}));
		const area = document.querySelector("#doc-form .cm-content"), view = window.quireEditor.view;
		view.focus();
		view.dispatch({selection: {anchor: view.state.doc.length}});`
	if kind == "paste" {
		return `(() => {` + mk + `
			area.dispatchEvent(new ClipboardEvent("paste", {clipboardData: dt, bubbles: true, cancelable: true}));
			return true; })()`
	}
	return `(() => {` + mk + `
		area.dispatchEvent(new DragEvent("dragover", {dataTransfer: dt, bubbles: true, cancelable: true}));
		area.dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true}));
		return true; })()`
}

func TestBrowserPasteAndDropImages(t *testing.T) {
	ctx := newChrome(t)
	e := newEnv(t)
	grace := e.user("grace@example.com", "editor", "Engineering")
	doc := e.document(grace, documents.DocumentInput{Title: documents.Some("Release dashboard"), Visibility: documents.Some("department"),
		Content: documents.Some("# Release dashboard\n\nThe build times of the last four releases:\n")})
	data := base64.StdEncoding.EncodeToString(diagramPNG())

	do(t, ctx, "sign in and open the editor",
		signInByCookie(e, "grace@example.com", testPassword),
		chromedp.Navigate(e.server.URL+"/documents/"+doc.ID+"/edit"),
		waitVisible(id("attach")),
	)
	read(t, ctx, "paste an image", chromedp.Evaluate[bool](fileEvent("paste", "build-times.png", data)))
	pasted := read(t, ctx, "the pasted image's link", poll[string](
		`(document.getElementById("content").value.match(/!\[build-times\.png\]\(\/api\/documentation\/attachments\/[0-9a-f-]+\/content\)/) || [""])[0]`))
	read(t, ctx, "drop an image", chromedp.Evaluate[bool](fileEvent("drop", "dropped.png", data)))
	read(t, ctx, "the dropped image's link", poll[string](
		`(document.getElementById("content").value.match(/!\[dropped\.png\]\(\/api\/[^)]+\)/) || [""])[0]`))
	status := read(t, ctx, "upload status", chromedp.Text(id("attach-status")))
	if status != "Added dropped.png." {
		t.Errorf("status %q after the drop", status)
	}
	content := read(t, ctx, "editor content", formValue("content"))
	if !strings.HasPrefix(content, "# Release dashboard\n\nThe build times of the last four releases:\n\n"+pasted+"\n") {
		t.Errorf("the link was not inserted at the cursor: %q", content)
	}

	do(t, ctx, "save and see the images",
		chromedp.Click(id("save-document")),
		waitVisible(id("doc-body")),
	)
	// Loaded for real: the page's CSP allows the API's URL, and the
	// session cookie opens it.
	loaded := read(t, ctx, "images loaded", poll[int](
		`(() => { const imgs = Array.from(document.querySelectorAll("#doc-body img"));
		 return imgs.length === 2 && imgs.every(i => i.complete && i.naturalWidth === 240) ? imgs.length : 0; })()`))
	files := read(t, ctx, "the files listed", chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll("#file-list li a")).map(a => a.textContent.trim())`))
	if loaded != 2 || strings.Join(files, ",") != "build-times.png,dropped.png" {
		t.Fatalf("images loaded %d, files listed %q", loaded, files)
	}
	do(t, ctx, "screenshot",
		chromedp.ScrollIntoView(id("files")),
		screenshot("attachments.png"),
	)
	saved := e.get(grace, doc.ID)
	if !strings.Contains(saved.Content, pasted) {
		t.Errorf("saved content %q lacks %q", saved.Content, pasted)
	}
}
