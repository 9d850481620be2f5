package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"quire"
)

// TestVersionAuthors: a version made from the live text lists everyone
// whose live changes it holds, in the order of their first change, in the
// versions list and the version's detail; every other version lists none.
func TestVersionAuthors(t *testing.T) {
	t.Parallel()
	fx, ada := newDocsFixtureWithAda(t)
	fx.person("bob@example.com", "editor", "Engineering", false)
	doc := fx.create(ada, map[string]any{"title": "Live", "content": "hi", "visibility": "public"})
	ctx := context.Background()
	all := quire.Visibility{All: true}
	adaID, bobID := fx.users["ada@example.com"].ID, fx.users["bob@example.com"].ID
	// Bob types first, then Ada, then Bob again: the text is "hi!?.".
	for i, c := range []struct{ user, change string }{{bobID, `[2,[0,"!"]]`}, {adaID, `[3,[0,"?"]]`}, {bobID, `[4,[0,"."]]`}} {
		err := fx.store.AppendLive(ctx, all, doc.ID, int64(i), []quire.LiveChange{{Change: json.RawMessage(c.change),
			ClientID: "tab", UserID: c.user}}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fx.store.SaveLive(ctx, all, doc.ID, time.Time{}, adaID, 3, "hi!?.", time.Now()); err != nil {
		t.Fatal(err)
	}
	vs := decodeVersions(t, fx.do("GET", docsPath+"/"+doc.ID+"/versions", bearer(ada)))
	want := []personWire{{ID: bobID, Name: fx.users["bob@example.com"].Name}, {ID: adaID, Name: fx.users["ada@example.com"].Name}}
	if len(vs) != 2 || vs[0].VersionNumber != 2 || !samePeople(vs[0].Authors, want) || vs[1].Authors == nil || len(vs[1].Authors) != 0 {
		t.Fatalf("versions: %+v", vs)
	}
	v := wantMember[versionWire](t, fx.do("GET", docsPath+"/"+doc.ID+"/versions/2", bearer(ada)), http.StatusOK, "version")
	if !samePeople(v.Authors, want) {
		t.Fatalf("version 2: %+v", v)
	}
	v = wantMember[versionWire](t, fx.do("GET", docsPath+"/"+doc.ID+"/versions/1", bearer(ada)), http.StatusOK, "version")
	if v.Authors == nil || len(v.Authors) != 0 {
		t.Fatalf("version 1: %+v", v)
	}
}

func samePeople(a, b []personWire) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
