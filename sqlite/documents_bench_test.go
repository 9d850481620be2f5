package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire"
)

// The document benchmarks run on databases of 10,000 and 100,000 documents
// of about 2 KB, built once and cached in os.TempDir() under a name that
// carries the size and a hash of the schema and of this generator, so that
// a change to either builds afresh. Run them with, for example:
//
//	go test -run '^$' -bench 'List|Search|Read|GuardedUpdate' -benchtime 3s -count 3 ./sqlite/
//
// The reader is an editor of one department (of 10) who belongs to 2 of 20
// projects, so the rows under a page mix what they may and may not see.

// benchSizes are the database sizes every document benchmark runs on.
var benchSizes = []int{10_000, 100_000}

// benchGenerator versions the data below; change it with the generator.
const benchGenerator = "docs-v1"

// benchWords is the vocabulary of titles and bodies. Words are drawn with a
// Zipf distribution over the words and their derived forms, as in real
// text: a few are everywhere, most are rare.
const benchWords = `the of and to in is for on that with as be this by are from or at it an
system service document user data team process release version server request
policy access project review change update network security account report
configuration deployment storage database cluster node backup incident customer
meeting budget quarter planning design architecture interface module component
library package build test pipeline monitoring alert metric dashboard log trace
error failure recovery restore migration schema index query cache queue worker
message event stream batch schedule job task ticket issue bug feature request
approval contract invoice payment vendor supplier partner market sales revenue
forecast target goal objective result outcome risk compliance audit control
standard procedure guideline template checklist handbook manual tutorial guide
onboarding training workshop presentation summary agenda minutes decision action
owner manager engineer analyst designer writer editor reviewer operator admin
support help desk escalation priority severity impact scope timeline milestone
roadmap backlog sprint iteration retrospective estimate capacity resource cost
license certificate key secret token password session login identity role group
permission folder file archive draft publish status visibility department office
region country language translation content format markdown table chart diagram
image video link reference source origin target destination route gateway proxy
balancer firewall rule zone domain address port protocol client browser mobile
device hardware software platform cloud region container image registry volume
memory processor disk bandwidth latency throughput availability reliability
performance scalability capacity limit quota threshold window interval period
daily weekly monthly annual morning evening first second third final new old
large small fast slow simple complex internal external public private shared
local global primary secondary main default custom manual automatic optional
required current previous next early late open closed active inactive pending
complete partial valid invalid secure stable critical major minor`

var benchSuffixes = []string{"", "s", "ing", "ed", "er", "al"}

// benchVocabulary returns the words and their derived forms, most common first.
func benchVocabulary() []string {
	base := strings.Fields(benchWords)
	vocab := make([]string, 0, len(base)*len(benchSuffixes))
	for _, suffix := range benchSuffixes {
		for _, w := range base {
			vocab = append(vocab, w+suffix)
		}
	}
	return vocab
}

// benchText returns about size bytes of sentences drawn from vocab.
func benchText(r *rand.Rand, z *rand.Zipf, vocab []string, size int) string {
	var b strings.Builder
	for b.Len() < size {
		n := 6 + r.IntN(12)
		for i := range n {
			w := vocab[z.Uint64()]
			if i == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
		b.WriteString(". ")
		if r.IntN(8) == 0 {
			b.WriteString("\n\n")
		}
	}
	return b.String()
}

// benchTitle returns three to seven words drawn from vocab, capitalised.
func benchTitle(r *rand.Rand, z *rand.Zipf, vocab []string) string {
	words := make([]string, 3+r.IntN(5))
	for i := range words {
		words[i] = vocab[z.Uint64()]
	}
	words[0] = strings.ToUpper(words[0][:1]) + words[0][1:]
	return strings.Join(words, " ")
}

// benchFixture is what a benchmark needs to know of a built database.
type benchFixture struct {
	db      *DB
	editor  quire.Visibility
	visible []string // ids of documents the editor sees, in random order
	search  string   // two words of middling frequency
}

// benchSchemaKey hashes the migrations and the generator version.
func benchSchemaKey(tb testing.TB) string {
	h := sha256.New()
	io.WriteString(h, benchGenerator)
	err := fs.WalkDir(migrations, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := migrations.ReadFile(path)
		h.Write([]byte(path))
		h.Write(body)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// openBenchDB opens the cached database of n documents, building it first
// when there is none. With scratch set it opens a private copy, for
// benchmarks that write.
func openBenchDB(b *testing.B, n int, scratch bool) *benchFixture {
	b.Helper()
	ctx := context.Background()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("quire-bench-%s-%d.db", benchSchemaKey(b), n))
	if _, err := os.Stat(path); err != nil {
		start := time.Now()
		if err := buildBenchDB(ctx, path, n); err != nil {
			b.Fatalf("build bench database of %d documents: %v", n, err)
		}
		b.Logf("built %s in %v", path, time.Since(start).Round(time.Millisecond))
	}
	if scratch {
		cp := filepath.Join(b.TempDir(), "bench.db")
		if err := copyFile(path, cp); err != nil {
			b.Fatal(err)
		}
		path = cp
	}
	db, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })

	fx := &benchFixture{db: db}
	var dept string
	err = db.read.QueryRowContext(ctx, `SELECT id, COALESCE(department_id, '') FROM users WHERE email = 'editor@bench.example'`).
		Scan(&fx.editor.UserID, &dept)
	if err != nil {
		b.Fatal(err)
	}
	fx.editor.DepartmentID = dept
	docs, _, err := db.ListDocuments(ctx, quire.DocumentFilter{Visibility: fx.editor, SortBy: "created_at", Limit: 2000})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, i := range r.Perm(len(docs)) {
		fx.visible = append(fx.visible, docs[i].ID)
	}
	vocab := benchVocabulary()
	fx.search = vocab[100] + " " + vocab[250]
	return fx
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// buildBenchDB writes n documents, each with its tags and version 1, in
// transactions of a few thousand rows, through the same tables and
// triggers as CreateDocument, then moves the finished file to path.
func buildBenchDB(ctx context.Context, path string, n int) error {
	tmp := path + ".building"
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(tmp + suffix)
	}
	db, err := Open(ctx, tmp)
	if err != nil {
		return err
	}
	defer db.Close()
	r := rand.New(rand.NewPCG(uint64(n), 42))
	vocab := benchVocabulary()
	zipf := rand.NewZipf(r, 1.07, 2, uint64(len(vocab)-1))

	const nDepts, nProjects, nUsers, nFolders, nTags = 10, 20, 200, 100, 50
	deptIDs, projectIDs, folderIDs := make([]string, nDepts), make([]string, nProjects), make([]string, nFolders)
	userIDs, userDept := make([]string, nUsers), make([]string, nUsers)
	tags := make([]string, nTags)
	for i := range tags {
		tags[i] = strings.ToUpper(vocab[i*7][:1]) + vocab[i*7][1:]
	}
	epoch := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	err = db.tx(ctx, func(tx *sql.Tx) error {
		for i := range deptIDs {
			deptIDs[i] = newID()
			if _, err := tx.ExecContext(ctx, `INSERT INTO departments (id, name) VALUES (?, ?)`, deptIDs[i], fmt.Sprint("Department ", i)); err != nil {
				return err
			}
		}
		for i := range userIDs {
			userIDs[i], userDept[i] = newID(), deptIDs[i%nDepts]
			email := fmt.Sprintf("user%d@bench.example", i)
			if i == 0 {
				email = "editor@bench.example"
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO users (id, email, name, role_key, department_id, status, created_at, updated_at)
				VALUES (?, ?, ?, 'editor', ?, 'active', ?, ?)`, userIDs[i], email, fmt.Sprint("User ", i), userDept[i],
				toMicros(epoch), toMicros(epoch)); err != nil {
				return err
			}
		}
		for i := range projectIDs {
			projectIDs[i] = newID()
			if _, err := tx.ExecContext(ctx, `INSERT INTO projects (id, name) VALUES (?, ?)`, projectIDs[i], fmt.Sprint("Project ", i)); err != nil {
				return err
			}
			// Ten members each; the editor (user 0) is in projects 0 and 10.
			for m := range 10 {
				if _, err := tx.ExecContext(ctx, `INSERT INTO project_members (project_id, user_id) VALUES (?, ?)`,
					projectIDs[i], userIDs[(i+m*nProjects)%nUsers]); err != nil {
					return err
				}
			}
		}
		for i := range folderIDs {
			folderIDs[i] = newID()
			parent := ""
			if i >= 10 {
				parent = folderIDs[i%10]
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO folders (id, name, parent_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
				folderIDs[i], fmt.Sprint("Folder ", i), nullString(parent), toMicros(epoch), toMicros(epoch)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}

	visibilities := []string{"private", "private", "department", "department", "department", "project", "project", "public", "public", "public"}
	const batch = 5000
	for start := 0; start < n; start += batch {
		err := db.tx(ctx, func(tx *sql.Tx) error {
			insDoc, err := tx.PrepareContext(ctx, `INSERT INTO documents
				(id, title, summary, content_type, status, visibility, folder_id, department_id, project_id,
				 owner_id, version, created_at, updated_at, content)
				VALUES (?, ?, ?, 'markdown', ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)`)
			if err != nil {
				return err
			}
			insTag, err := tx.PrepareContext(ctx, `INSERT INTO document_tags (document_id, position, tag, tag_norm) VALUES (?, ?, ?, ?)`)
			if err != nil {
				return err
			}
			insVersion, err := tx.PrepareContext(ctx, `INSERT INTO document_versions
				(document_id, number, title, summary, content_type, status, visibility, tags,
				 folder_id, department_id, project_id, created_at, created_by, content)
				VALUES (?, 1, ?, ?, 'markdown', ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
			if err != nil {
				return err
			}
			for i := start; i < min(start+batch, n); i++ {
				id, owner := newID(), r.IntN(nUsers)
				title := benchTitle(r, zipf, vocab)
				summary := benchText(r, zipf, vocab, 60+r.IntN(60))
				content := benchText(r, zipf, vocab, 1800+r.IntN(400))
				status := quire.Statuses[r.IntN(len(quire.Statuses))]
				visibility := visibilities[r.IntN(len(visibilities))]
				folder, project := "", ""
				if r.IntN(4) > 0 {
					folder = folderIDs[r.IntN(nFolders)]
				}
				if visibility == "project" {
					project = projectIDs[r.IntN(nProjects)]
				}
				at := toMicros(epoch.Add(time.Duration(r.Int64N(int64(365 * 24 * time.Hour)))))
				docTags := []string{}
				for range r.IntN(5) {
					if t := tags[r.IntN(nTags)]; !containsFold(docTags, t) {
						docTags = append(docTags, t)
					}
				}
				tagsJSON, _ := json.Marshal(docTags)
				if _, err := insDoc.ExecContext(ctx, id, title, summary, status, visibility, nullString(folder),
					userDept[owner], nullString(project), userIDs[owner], at, at, content); err != nil {
					return err
				}
				for pos, t := range docTags {
					if _, err := insTag.ExecContext(ctx, id, pos, t, normalizeTag(t)); err != nil {
						return err
					}
				}
				if _, err := insVersion.ExecContext(ctx, id, title, summary, status, visibility, string(tagsJSON),
					nullString(folder), userDept[owner], nullString(project), at, userIDs[owner], content); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if err := db.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// BenchmarkList reads the first page of 20, newest first, with the total,
// as the editor.
func BenchmarkList(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			fx := openBenchDB(b, n, false)
			f := quire.DocumentFilter{Visibility: fx.editor, SortBy: "updated_at", Desc: true, Limit: 20}
			var total int
			for b.Loop() {
				docs, t, err := fx.db.ListDocuments(b.Context(), f)
				if err != nil || len(docs) != 20 {
					b.Fatalf("list: %d documents, %v", len(docs), err)
				}
				total = t
			}
			b.ReportMetric(float64(total), "visible")
		})
	}
}

// BenchmarkSearch finds two words, best first, first page of 20 with the
// total, as the editor.
func BenchmarkSearch(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			fx := openBenchDB(b, n, false)
			f := quire.DocumentFilter{Visibility: fx.editor, Search: fx.search, SortBy: "relevance", Desc: true, Limit: 20}
			var total int
			for b.Loop() {
				docs, t, err := fx.db.ListDocuments(b.Context(), f)
				if err != nil || len(docs) == 0 {
					b.Fatalf("search %q: %d documents, %v", fx.search, len(docs), err)
				}
				total = t
			}
			b.ReportMetric(float64(total), "matches")
		})
	}
}

// BenchmarkRead reads one visible document by id, content included.
func BenchmarkRead(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			fx := openBenchDB(b, n, false)
			i := 0
			for b.Loop() {
				if _, err := fx.db.Document(b.Context(), fx.editor, fx.visible[i%len(fx.visible)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkGuardedUpdate saves a new body under the conflict guard, which
// also rewrites the search index entry and records a version.
func BenchmarkGuardedUpdate(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			fx := openBenchDB(b, n, true)
			ctx := b.Context()
			base := map[string]time.Time{}
			for _, id := range fx.visible {
				d, err := fx.db.Document(ctx, fx.editor, id)
				if err != nil {
					b.Fatal(err)
				}
				base[id] = d.UpdatedAt
			}
			now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
			i := 0
			for b.Loop() {
				id := fx.visible[i%len(fx.visible)]
				now = now.Add(time.Millisecond)
				d, err := fx.db.UpdateDocument(ctx, fx.editor, id, base[id], fx.editor.UserID, now,
					func(d *quire.Document) (bool, error) {
						d.Content = fmt.Sprintf("Edit %d. %s", i, d.Content[min(len(d.Content), 12):])
						return true, nil
					})
				if err != nil {
					b.Fatal(err)
				}
				base[id] = d.UpdatedAt
				i++
			}
		})
	}
}

// TestSearchIndexIntegrity checks, beyond what the store suite can see
// through searches, that the external-content index agrees exactly with
// the documents after creates, text edits, edits that leave the text alone
// and deletes: FTS5's integrity-check with rank 1 compares the index with
// the text of every row.
func TestSearchIndexIntegrity(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "quire.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	owner := &quire.User{Email: "owner@example.com", Name: "Owner", Role: quire.Role{Key: "editor"},
		Status: quire.UserActive, PasswordHash: "h"}
	if err := db.CreateUser(ctx, owner); err != nil {
		t.Fatal(err)
	}
	all := quire.Visibility{All: true}
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 12 {
		d := &quire.Document{Title: fmt.Sprintf("Café %d", i), Summary: "résumé", Content: fmt.Sprintf("body %d of the text", i),
			ContentType: "plain", Status: "draft", Visibility: "public", OwnerID: owner.ID}
		if err := db.CreateDocument(ctx, d, now); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	for i, id := range ids {
		_, err := db.UpdateDocument(ctx, all, id, time.Time{}, owner.ID, now, func(d *quire.Document) (bool, error) {
			switch i % 3 {
			case 0:
				d.Content = "rewritten " + d.Content
			case 1:
				d.Status = "published" // the text stays as it is
			case 2:
				d.Title, d.Summary = "Renamed", ""
			}
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if i%4 == 0 {
			if err := db.DeleteDocument(ctx, all, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := db.write.ExecContext(ctx, `INSERT INTO documents_fts (documents_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Fatalf("full-text index out of step with documents: %v", err)
	}
	var indexed, stored int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM documents_fts_docsize`).Scan(&indexed); err != nil {
		t.Fatal(err)
	}
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM documents`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if indexed != stored || stored != 9 {
		t.Errorf("%d rows indexed for %d documents, want 9 of each", indexed, stored)
	}
}
