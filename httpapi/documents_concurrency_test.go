package httpapi

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDocumentConcurrentUpdates sends 20 PUTs at once with the same
// baseUpdatedAt: exactly one may win, every other gets 409 showing the
// winner's state, and the stored document and versions hold the winner's
// write and nothing else (no lost write, no phantom version).
func TestDocumentConcurrentUpdates(t *testing.T) {
	t.Parallel()
	fx, ada := newDocsFixtureWithAda(t)
	bob := fx.person("bob@example.com", "editor", "Engineering", false)
	const writers = 20

	for round := range 3 {
		t.Run(fmt.Sprintf("round %d: of 20 guarded updates exactly one succeeds", round+1), func(t *testing.T) {
			fx := fx.in(t)
			doc := fx.create(ada, map[string]any{"title": "Race", "content": "base", "visibility": "department"})
			path := docsPath + "/" + doc.ID
			results := make([]*resp, writers)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					tok := ada
					if i%2 == 1 {
						tok = bob
					}
					<-start
					results[i] = fx.do("PUT", path, bearer(tok), jsonBody(map[string]any{
						"content": fmt.Sprintf("writer %d", i), "title": fmt.Sprintf("Race %d", i), "baseUpdatedAt": doc.UpdatedAt,
					}))
				}()
			}
			close(start)
			wg.Wait()

			var winner docWire
			wins, conflicts := 0, 0
			for i, r := range results {
				switch r.Status {
				case http.StatusOK:
					wins++
					winner = decodeDoc(t, r)
					if *winner.Content != fmt.Sprintf("writer %d", i) {
						t.Fatalf("writer %d was answered with content %q", i, *winner.Content)
					}
				case http.StatusConflict:
					conflicts++
				default:
					t.Fatalf("writer %d: status %d: %s", i, r.Status, r.Body)
				}
			}
			if wins != 1 || conflicts != writers-1 {
				t.Fatalf("%d successes and %d conflicts, want 1 and %d", wins, conflicts, writers-1)
			}
			for _, r := range results {
				if r.Status != http.StatusConflict {
					continue
				}
				var c conflictWire
				strictDecode(t, r.Body, &c)
				if diff := cmp.Diff(winner, c.Document); diff != "" || c.UpdatedAt != winner.UpdatedAt {
					t.Fatalf("a conflict shows another state than the winner's (-winner +shown)\n%s", diff)
				}
			}
			stored := decodeDoc(t, fx.do("GET", path, bearer(ada)))
			if diff := cmp.Diff(winner, stored); diff != "" {
				t.Fatalf("stored document is not the winner's (-winner +stored)\n%s", diff)
			}
			vs := decodeVersions(t, fx.do("GET", path+"/versions", bearer(ada)))
			if len(vs) != 2 || vs[0].VersionNumber != 2 || vs[1].VersionNumber != 1 || vs[0].Title != winner.Title {
				t.Fatalf("versions %+v, want 2 (the winner's) and 1", vs)
			}
			for n, want := range map[int]string{1: "base", 2: *winner.Content} {
				var v struct {
					Version versionWire `json:"version"`
				}
				strictDecode(t, fx.do("GET", fmt.Sprintf("%s/versions/%d", path, n), bearer(ada)).Body, &v)
				if *v.Version.Content != want {
					t.Fatalf("version %d holds %q, want %q", n, *v.Version.Content, want)
				}
			}
		})
	}

	t.Run("20 unguarded updates at once are all applied, each as its own version", func(t *testing.T) {
		fx := fx.in(t)
		doc := fx.create(ada, map[string]any{"title": "Pile", "content": "base", "visibility": "department"})
		path := docsPath + "/" + doc.ID
		var wg sync.WaitGroup
		statuses := make([]int, writers)
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = fx.do("PUT", path, bearer(bob), jsonBody(map[string]any{"content": fmt.Sprintf("writer %d", i)})).Status
			}()
		}
		wg.Wait()
		for i, s := range statuses {
			if s != http.StatusOK {
				t.Fatalf("writer %d: %d", i, s)
			}
		}
		vs := decodeVersions(t, fx.do("GET", path+"/versions", bearer(ada)))
		if len(vs) != writers+1 {
			t.Fatalf("%d versions, want %d", len(vs), writers+1)
		}
		seen := map[string]bool{}
		for i, v := range vs {
			if v.VersionNumber != writers+1-i {
				t.Fatalf("version %d at position %d", v.VersionNumber, i)
			}
			if i > 0 && v.CreatedAt >= vs[i-1].CreatedAt {
				t.Fatalf("version %d saved at %s, not before version %d at %s", v.VersionNumber, v.CreatedAt, vs[i-1].VersionNumber, vs[i-1].CreatedAt)
			}
			if i < writers {
				var d struct {
					Version versionWire `json:"version"`
				}
				strictDecode(t, fx.do("GET", fmt.Sprintf("%s/versions/%d", path, v.VersionNumber), bearer(ada)).Body, &d)
				seen[*d.Version.Content] = true
			}
		}
		if len(seen) != writers {
			t.Fatalf("%d distinct writes recorded, want %d", len(seen), writers)
		}
	})
}
