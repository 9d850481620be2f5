package transfer_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/transfer"
)

// TestImportHonoursAnIDOnlyForTheSameDocument: an administrator's import
// (a restore of an old export, a migration) that holds the id of an
// editor's document writes nothing into it unless it is that document (the
// same created_at); the file gets a new id and the archive's links follow
// it. What an import answers does not tell a document that the importer
// cannot see from one that is another document.
func TestImportHonoursAnIDOnlyForTheSameDocument(t *testing.T) {
	s := newSpace(t)
	ed := s.user("ed@example.com", "Ed", "editor")
	admin := s.user("root@example.com", "Root", "admin")
	mine := s.doc(ed, "Ed's notes", "ed's text", "", nil)

	archive := zipOf(t, [][2]string{
		{"secret.md", "---\nid: " + mine.ID + "\ntitle: Salaries\ncreated_at: 2020-01-01T00:00:00Z\n---\nthe administrator's private text"},
		{"index.md", "See [the secret](secret.md) and [by id](/documents/" + mine.ID + "#top) and " +
			"[absolute](https://quire.example.com/documents/" + mine.ID + ")."},
	})
	rep := s.importWith(admin, archive, transfer.Options{Visibility: "private"})
	if len(rep.Created) != 2 || len(rep.Updated) != 0 || len(rep.Refused) != 0 {
		t.Fatalf("report %+v", rep)
	}
	var secretID, indexID string
	for _, c := range rep.Created {
		switch c.Path {
		case "secret.md":
			secretID = c.ID
		case "index.md":
			indexID = c.ID
		}
	}
	if secretID == mine.ID || secretID == "" {
		t.Fatalf("the administrator's file took the editor's id %s", secretID)
	}
	if d, err := s.docs.Get(context.Background(), ed, mine.ID); err != nil || d.Content != "ed's text" || d.Version != 1 {
		t.Errorf("the editor's document: %+v, %v", d, err)
	}
	index, err := s.docs.Get(context.Background(), admin, indexID)
	if err != nil {
		t.Fatal(err)
	}
	want := "See [the secret](/documents/" + secretID + ") and [by id](/documents/" + secretID + "#top) and " +
		"[absolute](/documents/" + secretID + ")."
	if index.Content != want {
		t.Errorf("links:\n got %s\nwant %s", index.Content, want)
	}

	// The same document (its created_at) is updated.
	same := zipOf(t, [][2]string{{"notes.md", "---\nid: " + mine.ID + "\ncreated_at: " +
		mine.CreatedAt.Format(time.RFC3339Nano) + "\ntitle: Ed's notes\n---\nedited"}})
	rep = s.importZip(ed, same, "")
	if len(rep.Updated) != 1 || rep.Updated[0].ID != mine.ID {
		t.Fatalf("same document: %+v", rep)
	}

	// No oracle: for another editor, the id of a document they cannot see
	// and the id of their own document under another created_at get the
	// same answer.
	other := s.user("olga@example.com", "Olga", "editor")
	own := s.doc(other, "Olga's", "olga's text", "", nil)
	shape := func(id string) string {
		// Each into a folder of its own: a second import of x.md into the
		// same folder would update the first one's document.
		rep := s.importZip(other, zipOf(t, [][2]string{{"x.md", "---\nid: " + id +
			"\ncreated_at: 2020-01-01T00:00:00Z\n---\ntext"}}), s.folder(other, id, ""))
		out := strings.Builder{}
		for _, c := range rep.Created {
			out.WriteString("created " + c.Path + " new:" + boolText(c.ID != id) + ";")
		}
		for _, c := range rep.Updated {
			out.WriteString("updated " + c.Path + ";")
		}
		for _, r := range rep.Refused {
			out.WriteString("refused " + r.Path + ": " + r.Reason + ";")
		}
		return out.String()
	}
	hidden, different := shape(mine.ID), shape(own.ID)
	if diff := cmp.Diff(hidden, different); diff != "" || hidden != "created x.md new:true;" {
		t.Errorf("hidden %q, different %q", hidden, different)
	}
	if d, _ := s.docs.Get(context.Background(), other, own.ID); d.Content != "olga's text" {
		t.Errorf("Olga's document changed: %q", d.Content)
	}
	if d, _ := s.docs.Get(context.Background(), ed, mine.ID); d.Content != "edited" {
		t.Errorf("Ed's document: %q", d.Content)
	}
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestImportOptions: the archive's visibility and status apply to every
// document; without them a new document takes its front matter's, else
// the importer's department and published.
func TestImportOptions(t *testing.T) {
	s := newSpace(t)
	ann := s.user("ann@example.com", "Ann", "editor")
	archive := zipOf(t, [][2]string{
		{"plain.md", "plain"},
		{"said.md", "---\nvisibility: public\nstatus: review\n---\nsaid"},
	})
	vis := func(rep *transfer.Report) map[string]string {
		out := map[string]string{}
		for _, c := range append(rep.Created, rep.Updated...) {
			d, err := s.docs.Get(context.Background(), ann, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			out[c.Path] = d.Visibility + " " + d.Status
		}
		return out
	}
	// Ann has no department: private.
	got := vis(s.importWith(ann, archive, transfer.Options{FolderID: s.folder(ann, "A", "")}))
	if diff := cmp.Diff(map[string]string{"plain.md": "private published", "said.md": "public review"}, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	got = vis(s.importWith(ann, archive, transfer.Options{FolderID: s.folder(ann, "B", ""), Visibility: "public", Status: "draft"}))
	if diff := cmp.Diff(map[string]string{"plain.md": "public draft", "said.md": "public draft"}, got); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	for _, o := range []transfer.Options{{Visibility: "project"}, {Visibility: "everyone"}, {Status: "gone"}} {
		_, err := s.xfer.ImportZip(context.Background(), ann, strings.NewReader(string(archive)), int64(len(archive)), o)
		if quire.ErrorCode(err) != quire.EVALIDATION {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// TestImportTwiceUpdates: the same archive without ids imported again
// (under the same target folder) updates the documents the first import
// made, matched by folder and file name or title, and stores their files
// once; another user's import of it makes documents of their own.
func TestImportTwiceUpdates(t *testing.T) {
	s := newSpace(t)
	ann := s.user("ann@example.com", "Ann", "editor")
	bob := s.user("bob@example.com", "Bob", "editor")
	target := s.folder(ann, "Moved in", "")
	count := func(a quire.Actor) int {
		n := 0
		if err := s.docs.Walk(context.Background(), a, func(d *quire.Document) error {
			if d.OwnerID == a.User.ID {
				n++
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, tc := range []struct {
		corpus string
		folder string
	}{
		{"obsidian-vault", target},
		{"hugo-site", ""},
		{"go-yaml-docs", target},
	} {
		first := importCorpus(t, s, ann, tc.corpus, transfer.Options{FolderID: tc.folder, Visibility: "public"})
		before := count(ann)
		second := importCorpus(t, s, ann, tc.corpus, transfer.Options{FolderID: tc.folder, Visibility: "public"})
		if after := count(ann); after != before || len(second.rep.Created) != 0 {
			t.Errorf("%s: %d documents, then %d; created again: %+v", tc.corpus, before, after, second.rep.Created)
		}
		if len(second.docs) != len(first.docs) {
			t.Errorf("%s: %d documents updated, %d imported first", tc.corpus, len(second.docs), len(first.docs))
		}
		for p, d := range first.docs {
			if second.docs[p] == nil || second.docs[p].ID != d.ID {
				t.Errorf("%s: %s is %v, was %s", tc.corpus, p, second.docs[p], d.ID)
			}
		}
	}
	// Bob sees Ann's documents (public), and his import of the same vault
	// is his own: nothing of Ann's changes.
	bobs := importCorpus(t, s, bob, "obsidian-vault", transfer.Options{FolderID: target})
	if len(bobs.rep.Updated) != 0 || len(bobs.docs) != 5 {
		t.Errorf("Bob's import: %+v", bobs.rep)
	}
}

// TestImportKeepsAFreeIDForAnAdministratorOnly: an id that no document has
// is kept in an administrator's import only (product.md section 16). An
// editor's gets a new id, so an editor can neither take the id of a
// document an administrator imports later (and read it through their own
// document, which the administrator's import would update) nor tell a free
// id from that of a document they cannot see.
func TestImportKeepsAFreeIDForAnAdministratorOnly(t *testing.T) {
	t.Parallel()
	s := newSpace(t)
	ed := s.user("ed@example.com", "Ed", "editor")
	admin := s.user("root@example.com", "Root", "admin")
	const id = "0195a3c4-1111-7222-8333-444455556666"
	const created = "2020-01-01T00:00:00Z"
	rep := s.importWith(ed, zipOf(t, [][2]string{{"bait.md", "---\nid: " + id + "\ncreated_at: " + created +
		"\nvisibility: private\ntitle: bait\n---\nbait"}}), transfer.Options{})
	if len(rep.Created) != 1 || rep.Created[0].ID == id {
		t.Fatalf("the editor's import: %+v, want one document under a new id", rep)
	}
	rep = s.importWith(admin, zipOf(t, [][2]string{{"salaries.md", "---\nid: " + id + "\ncreated_at: " + created +
		"\ntitle: Salaries\nvisibility: private\n---\nthe administrator's private text"}}), transfer.Options{})
	if len(rep.Created) != 1 || rep.Created[0].ID != id {
		t.Fatalf("the administrator's import: %+v, want the file's id kept", rep)
	}
	if d, err := s.docs.Get(context.Background(), ed, id); err == nil {
		t.Errorf("the editor reads the administrator's import: %q (owner %s)", d.Content, d.OwnerName)
	}

	secret := s.doc(admin, "Payroll", "secret", "", nil)
	const free = "0195a3c4-1111-7222-8333-444455556677"
	kept := func(id string) bool {
		f := s.folder(ed, "probe "+id, "")
		rep := s.importWith(ed, zipOf(t, [][2]string{{"x.md", "---\nid: " + id + "\n---\ntext"}}), transfer.Options{FolderID: f})
		if len(rep.Created) != 1 {
			t.Fatalf("%+v", rep)
		}
		return rep.Created[0].ID == id
	}
	if kept(free) || kept(secret.ID) {
		t.Errorf("an editor's import kept a file's id")
	}
}
