package acceptance

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"quire/documents"
)

// BenchmarkSharedPage serves one document as its shared page (/s/{token},
// no session) and as the signed-in document page (/documents/{id}), in
// turns in the same loop so that both see the same load, and reports each
// one's rate and their ratio (shared / signed-in; product.md section 21
// wants at least 0.8). The document has headings, a list, code, an image
// and a link to another shared document, so that the shared page does its
// rewriting of images and links.
//
//	go test ./acceptance -run '^$' -bench SharedPage -benchtime 2000x -count 3
func BenchmarkSharedPage(b *testing.B) {
	e := newEnv(b, func(c *envConfig) { c.sharesPerMinute = 1 << 30 })
	grace := e.user("grace@example.com", "editor", "Engineering")
	ctx := context.Background()
	other := e.document(grace, documents.DocumentInput{Title: documents.Some("Other"), Visibility: documents.Some("department")})
	if _, err := e.shares.Create(ctx, e.actor(grace), other.ID, time.Time{}); err != nil {
		b.Fatal(err)
	}
	doc := e.document(grace, documents.DocumentInput{Title: documents.Some("Runbook"), Visibility: documents.Some("department")})
	signed := e.signedIn("grace@example.com")
	_, _, fileURL := signed.upload(doc.ID, "diagram.png", diagramPNG(), true)
	var content strings.Builder
	content.WriteString("# Runbook\n\n![diagram](" + fileURL + ")\n\nSee [the other page](/documents/" + other.ID + ").\n\n")
	for i := range 20 {
		content.WriteString("## Step " + string(rune('A'+i)) + "\n\nRestart the **service** and check the `logs`:\n\n- one\n- two\n\n```go\nfmt.Println(\"ok\")\n```\n\n")
	}
	if _, err := e.docs.Update(ctx, e.actor(grace), doc.ID, documents.DocumentInput{Content: documents.Some(content.String())}, time.Time{}); err != nil {
		b.Fatal(err)
	}
	v, err := e.shares.Create(ctx, e.actor(grace), doc.ID, time.Time{})
	if err != nil {
		b.Fatal(err)
	}
	anon := e.browser()
	get := func(c *browser, path string) time.Duration {
		start := time.Now()
		req, _ := http.NewRequest("GET", e.server.URL+path, nil)
		res, err := c.client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			b.Fatalf("%s: %d", path, res.StatusCode)
		}
		return time.Since(start)
	}
	sharedPath := strings.TrimPrefix(v.URL, e.server.URL)
	for range 20 { // warm both: the render cache, the connections
		get(anon, sharedPath)
		get(signed, "/documents/"+doc.ID)
	}
	var shared, signedIn time.Duration
	for b.Loop() {
		shared += get(anon, sharedPath)
		signedIn += get(signed, "/documents/"+doc.ID)
	}
	n := float64(b.N)
	b.ReportMetric(n/shared.Seconds(), "shared/s")
	b.ReportMetric(n/signedIn.Seconds(), "signed-in/s")
	b.ReportMetric(signedIn.Seconds()/shared.Seconds(), "ratio")
}
