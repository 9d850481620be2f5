package storetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
)

func init() { register("attachments", testAttachments) }

// fileBytes returns n bytes of a pattern that differs from chunk to chunk,
// so that a chunk read in the wrong place shows.
func fileBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/quire.AttachmentChunkSize)
	}
	return b
}

// attach stores data as a file of the document, as seeAll, and returns it.
func (w *docWorld) attach(t *testing.T, s quire.Store, docID, name string, data []byte, at time.Time) *quire.Attachment {
	t.Helper()
	sum := sha256.Sum256(data)
	a := &quire.Attachment{DocumentID: docID, Name: name, ContentType: "application/octet-stream",
		Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), CreatedAt: at, CreatedByID: w.owner.ID}
	if err := s.CreateAttachment(t.Context(), seeAll, a, bytes.NewReader(data)); err != nil {
		t.Fatalf("create attachment %s: %v", name, err)
	}
	return a
}

// download reads every chunk of a as vis and returns the bytes.
func download(t *testing.T, s quire.Store, vis quire.Visibility, a *quire.Attachment) []byte {
	t.Helper()
	var out, buf []byte
	for n := 0; int64(n)*quire.AttachmentChunkSize < a.Size; n++ {
		var err error
		if buf, err = s.AttachmentChunk(t.Context(), vis, a.ID, n, buf); err != nil {
			t.Fatalf("chunk %d of %s: %v", n, a.Name, err)
		}
		out = append(out, buf...)
	}
	return out
}

func testAttachments(t *testing.T, open Opener) {
	t.Run("a file is stored in chunks and read back as it was", func(t *testing.T) {
		w, d := newDocWorldWithDraft(t, open, "Diagrams")
		ctx := t.Context()
		data := fileBytes(2*quire.AttachmentChunkSize + 1234)
		a := w.attach(t, w.s, d.ID, "big.bin", data, baseTime.Add(time.Second))
		empty := w.attach(t, w.s, d.ID, "empty.txt", nil, baseTime.Add(2*time.Second))
		if a.ID == "" || a.CreatedByName != w.owner.Name {
			t.Fatalf("created %+v: want an id and the creator's name", a)
		}
		if got := download(t, w.s, seeAll, a); !bytes.Equal(got, data) {
			t.Errorf("read back %d bytes, differing from the %d stored", len(got), len(data))
		}
		if _, err := w.s.AttachmentChunk(ctx, seeAll, a.ID, 3, nil); quire.ErrorCode(err) != quire.ENOTFOUND {
			t.Errorf("chunk past the end: %v, want NOT_FOUND", err)
		}
		got := must(w.s.Attachment(ctx, sees(w.owner), a.ID))(t)
		if diff := cmp.Diff(a, got); diff != "" {
			t.Errorf("Attachment (-created +read):\n%s", diff)
		}
		list := must(w.s.Attachments(ctx, sees(w.owner), d.ID))(t)
		if diff := cmp.Diff([]quire.Attachment{*a, *empty}, list); diff != "" {
			t.Errorf("Attachments, oldest first (-want +got):\n%s", diff)
		}
		other := w.create(t, draft(w.owner, "Empty"), baseTime)
		if list, err := w.s.Attachments(ctx, seeAll, other.ID); err != nil || list == nil || len(list) != 0 {
			t.Errorf("Attachments of a document without files = %v, %v; want an empty list", list, err)
		}
	})

	t.Run("bytes other than announced are refused and nothing is written", func(t *testing.T) {
		w, d := newDocWorldWithDraft(t, open, "Doc")
		ctx := t.Context()
		for _, size := range []int64{10, 12} {
			a := &quire.Attachment{DocumentID: d.ID, Name: "x", ContentType: "text/plain", Size: size, SHA256: "00",
				CreatedAt: baseTime, CreatedByID: w.owner.ID}
			if err := w.s.CreateAttachment(ctx, seeAll, a, bytes.NewReader(fileBytes(11))); err == nil {
				t.Errorf("11 bytes announced as %d were stored", size)
			}
		}
		if list, err := w.s.Attachments(ctx, seeAll, d.ID); err != nil || len(list) != 0 {
			t.Errorf("after refused writes: %v, %v; want no attachment", list, err)
		}
	})

	t.Run("a file is seen exactly by those who see its document", func(t *testing.T) {
		w, priv := newDocWorldWithDraft(t, open, "Private")
		ctx := t.Context()
		dept := draft(w.owner, "Department")
		dept.Visibility, dept.DepartmentID = "department", w.eng.ID
		w.create(t, dept, baseTime)
		proj := draft(w.owner, "Project")
		proj.Visibility, proj.ProjectID = "project", w.apollo.ID
		w.create(t, proj, baseTime)
		files := map[string]*quire.Attachment{}
		for _, d := range []*quire.Document{priv, dept, proj} {
			files[d.Title] = w.attach(t, w.s, d.ID, d.Title+".txt", []byte("hello"), baseTime)
		}
		for _, c := range []struct {
			who  *quire.User
			sees map[string]bool
		}{
			{w.owner, map[string]bool{"Private": true, "Department": true, "Project": true}},
			{w.colleague, map[string]bool{"Department": true}},
			{w.member, map[string]bool{"Project": true}},
			{w.outsider, map[string]bool{}},
		} {
			vis := sees(c.who)
			for title, a := range files {
				_, errGet := w.s.Attachment(ctx, vis, a.ID)
				_, errList := w.s.Attachments(ctx, vis, a.DocumentID)
				_, errChunk := w.s.AttachmentChunk(ctx, vis, a.ID, 0, nil)
				for what, err := range map[string]error{"Attachment": errGet, "Attachments": errList, "AttachmentChunk": errChunk} {
					if c.sees[title] && err != nil {
						t.Errorf("%s of %s as %s: %v, want it", what, title, c.who.Email, err)
					}
					if !c.sees[title] && quire.ErrorCode(err) != quire.ENOTFOUND {
						t.Errorf("%s of %s as %s: %v, want NOT_FOUND", what, title, c.who.Email, err)
					}
				}
			}
		}
		// Neither a write nor a delete reaches a document out of sight.
		a := &quire.Attachment{DocumentID: priv.ID, Name: "x", ContentType: "text/plain", Size: 1, SHA256: "00",
			CreatedAt: baseTime, CreatedByID: w.outsider.ID}
		wantCode(t, w.s.CreateAttachment(ctx, sees(w.outsider), a, bytes.NewReader([]byte("x"))), quire.ENOTFOUND)
		_, err := w.s.DeleteAttachment(ctx, sees(w.outsider), files["Private"].ID)
		wantCode(t, err, quire.ENOTFOUND)
		if list, _ := w.s.Attachments(ctx, seeAll, priv.ID); len(list) != 1 {
			t.Errorf("private document has %d files after an outsider's write and delete, want 1", len(list))
		}
		a.DocumentID = unknownID
		wantCode(t, w.s.CreateAttachment(ctx, seeAll, a, bytes.NewReader([]byte("x"))), quire.ENOTFOUND)
	})

	t.Run("files follow their document into the trash, out of it, and away with a purge", func(t *testing.T) {
		w, d := newDocWorldWithDraft(t, open, "Doc")
		ctx := t.Context()
		a := w.attach(t, w.s, d.ID, "a.bin", fileBytes(300_000), baseTime)
		w.trash(t, d.ID, w.owner, baseTime.Add(time.Minute))
		_, err := w.s.Attachment(ctx, seeAll, a.ID)
		wantCode(t, err, quire.ENOTFOUND)
		_, err = w.s.Attachments(ctx, seeAll, d.ID)
		wantCode(t, err, quire.ENOTFOUND)
		_, err = w.s.AttachmentChunk(ctx, seeAll, a.ID, 0, nil)
		wantCode(t, err, quire.ENOTFOUND)
		_, err = w.s.DeleteAttachment(ctx, seeAll, a.ID)
		wantCode(t, err, quire.ENOTFOUND)
		b := &quire.Attachment{DocumentID: d.ID, Name: "x", ContentType: "text/plain", Size: 1, SHA256: "00",
			CreatedAt: baseTime, CreatedByID: w.owner.ID}
		wantCode(t, w.s.CreateAttachment(ctx, seeAll, b, bytes.NewReader([]byte("x"))), quire.ENOTFOUND)

		if _, err := w.s.RestoreDocument(ctx, seeAll, d.ID); err != nil {
			t.Fatal(err)
		}
		if got := download(t, w.s, sees(w.owner), a); !bytes.Equal(got, fileBytes(300_000)) {
			t.Errorf("after the restore the file reads %d bytes, not as stored", len(got))
		}

		w.trash(t, d.ID, w.owner, baseTime.Add(2*time.Minute))
		if err := w.s.PurgeDocument(ctx, seeAll, d.ID); err != nil {
			t.Fatal(err)
		}
		kept := w.create(t, draft(w.owner, "Kept"), baseTime)
		k := w.attach(t, w.s, kept.ID, "k.bin", []byte("kept"), baseTime)
		old := w.create(t, draft(w.owner, "Old"), baseTime)
		o := w.attach(t, w.s, old.ID, "o.bin", []byte("old"), baseTime)
		w.trash(t, old.ID, w.owner, baseTime.Add(time.Hour))
		if n, err := w.s.PurgeTrash(ctx, baseTime.Add(2*time.Hour), 10, nil); err != nil || n != 1 {
			t.Fatalf("PurgeTrash = %d, %v; want 1", n, err)
		}
		// Restoring the purged documents is impossible, and their files
		// are gone from every query: no row is left behind.
		for _, gone := range []*quire.Attachment{a, o} {
			_, err := w.s.Attachment(ctx, seeAll, gone.ID)
			wantCode(t, err, quire.ENOTFOUND)
			_, err = w.s.AttachmentChunk(ctx, seeAll, gone.ID, 0, nil)
			wantCode(t, err, quire.ENOTFOUND)
		}
		if got := download(t, w.s, seeAll, k); string(got) != "kept" {
			t.Errorf("the file of a live document reads %q after a purge", got)
		}
	})

	t.Run("delete removes a file and its bytes", func(t *testing.T) {
		w, d := newDocWorldWithDraft(t, open, "Doc")
		ctx := t.Context()
		a := w.attach(t, w.s, d.ID, "a.bin", fileBytes(quire.AttachmentChunkSize+1), baseTime)
		b := w.attach(t, w.s, d.ID, "b.bin", []byte("b"), baseTime)
		gone := must(w.s.DeleteAttachment(ctx, sees(w.owner), a.ID))(t)
		if diff := cmp.Diff(a, gone); diff != "" {
			t.Errorf("DeleteAttachment returned (-want +got):\n%s", diff)
		}
		_, err := w.s.AttachmentChunk(ctx, seeAll, a.ID, 1, nil)
		wantCode(t, err, quire.ENOTFOUND)
		_, err = w.s.DeleteAttachment(ctx, seeAll, a.ID)
		wantCode(t, err, quire.ENOTFOUND)
		if list, _ := w.s.Attachments(ctx, seeAll, d.ID); len(list) != 1 || list[0].ID != b.ID {
			t.Errorf("after the delete: %v, want only b.bin", list)
		}
	})

	t.Run("events are written with the change, and not with a refused one", func(t *testing.T) {
		w, d := newDocWorldWithDraft(t, open, "Doc")
		ctx := t.Context()
		ev := func(action string) *quire.Event {
			return quire.NewEvent(action, baseTime, quire.EventActorOf(quire.Actor{User: *w.owner}), quire.RequestInfo{}).
				On(quire.TargetAttachment, "", "a.bin")
		}
		a := w.attach(t, w.s.Recording(ev(quire.ActionAttachmentCreated)), d.ID, "a.bin", []byte("a"), baseTime)
		refused := &quire.Attachment{DocumentID: unknownID, Name: "x", ContentType: "text/plain", Size: 1, SHA256: "00",
			CreatedAt: baseTime, CreatedByID: w.owner.ID}
		wantCode(t, w.s.Recording(ev(quire.ActionAttachmentCreated)).CreateAttachment(ctx, seeAll, refused,
			bytes.NewReader([]byte("x"))), quire.ENOTFOUND)
		if _, err := w.s.Recording(ev(quire.ActionAttachmentDeleted)).DeleteAttachment(ctx, seeAll, a.ID); err != nil {
			t.Fatal(err)
		}
		_, err := w.s.Recording(ev(quire.ActionAttachmentDeleted)).DeleteAttachment(ctx, seeAll, a.ID)
		wantCode(t, err, quire.ENOTFOUND)
		got := actions(auditEvents(t, w.s, quire.AuditFilter{Action: "attachment."}))
		if diff := cmp.Diff([]string{quire.ActionAttachmentDeleted, quire.ActionAttachmentCreated}, got); diff != "" {
			t.Errorf("events, newest first (-want +got):\n%s", diff)
		}
	})
}
