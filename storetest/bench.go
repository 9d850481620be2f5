package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"quire"
)

// The document benchmarks, shared by the stores so that both are measured
// on the same data with the same operations. NewBenchData describes the
// database; each store writes it in its own fastest way (and caches it),
// then hands the opened store to NewBenchFixture, and its BenchmarkList,
// BenchmarkSearch, BenchmarkRead and BenchmarkGuardedUpdate run the bodies
// below through RunBench, for each of BenchSizes.
//
// The reader is an editor of one department (of 10) who belongs to one of
// 20 projects, so that the rows under a page mix what they may and may not
// see: of the documents, 2 in 10 are private, 3 department, 2 project and
// 3 public.

// BenchSizes are the numbers of documents every document benchmark runs on.
var BenchSizes = []int{10_000, 100_000}

// BenchGenerator versions the data of NewBenchData: a store's cache key
// includes it, so change it with the generator.
const BenchGenerator = "docs-v1"

// BenchReaderEmail is the email of the user the benchmarks read as.
const BenchReaderEmail = "editor@bench.example"

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

// BenchData describes a benchmark database of N documents of about 2 KB.
// Everything but the identifiers (new UUIDs v7) is the same at every run.
type BenchData struct {
	N           int
	Epoch       time.Time // the creation time of everything but documents
	Departments []quire.Department
	// Users are active editors without a password, each in department
	// i%10; Users[0] is the reader (BenchReaderEmail).
	Users    []quire.User
	Projects []quire.Project // ten members each
	// Folders: ten at the top, ninety under them.
	Folders []quire.Folder
}

// NewBenchData returns the description of the database of n documents.
func NewBenchData(n int) *BenchData {
	const nDepts, nProjects, nUsers, nFolders = 10, 20, 200, 100
	d := &BenchData{N: n, Epoch: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	for i := range nDepts {
		d.Departments = append(d.Departments, quire.Department{ID: benchID(), Name: fmt.Sprint("Department ", i)})
	}
	for i := range nUsers {
		email := fmt.Sprintf("user%d@bench.example", i)
		if i == 0 {
			email = BenchReaderEmail
		}
		dept := d.Departments[i%nDepts]
		d.Users = append(d.Users, quire.User{
			ID: benchID(), Email: email, Name: fmt.Sprint("User ", i),
			Role:         quire.Role{Key: "editor", Label: "Editor", Docs: quire.LevelWrite},
			DepartmentID: dept.ID, DepartmentName: dept.Name,
			Status: quire.UserActive, CreatedAt: d.Epoch, UpdatedAt: d.Epoch,
		})
	}
	for i := range nProjects {
		p := quire.Project{ID: benchID(), Name: fmt.Sprint("Project ", i)}
		// Members i, i+20, ... i+180: the reader (user 0) is in project 0.
		for m := range 10 {
			p.MemberIDs = append(p.MemberIDs, d.Users[(i+m*nProjects)%nUsers].ID)
		}
		d.Projects = append(d.Projects, p)
	}
	for i := range nFolders {
		f := quire.Folder{ID: benchID(), Name: fmt.Sprint("Folder ", i), CreatedAt: d.Epoch, UpdatedAt: d.Epoch}
		if i >= 10 {
			f.ParentID = d.Folders[i%10].ID
		}
		d.Folders = append(d.Folders, f)
	}
	return d
}

func benchID() string { return uuid.Must(uuid.NewV7()).String() }

// Documents calls emit with each of the N documents in turn, the same ones
// (but for their IDs) at every run. Each is its own version 1, written by
// its owner: a store writes the document, its tags and that version.
// Created and updated at the same microsecond within the year after Epoch.
func (d *BenchData) Documents(emit func(doc *quire.Document) error) error {
	r := rand.New(rand.NewPCG(uint64(d.N), 42))
	vocab := benchVocabulary()
	zipf := rand.NewZipf(r, 1.07, 2, uint64(len(vocab)-1))
	const nTags = 50
	tags := make([]string, nTags)
	for i := range tags {
		tags[i] = strings.ToUpper(vocab[i*7][:1]) + vocab[i*7][1:]
	}
	visibilities := []string{"private", "private", "department", "department", "department", "project", "project", "public", "public", "public"}
	for range d.N {
		owner := d.Users[r.IntN(len(d.Users))]
		doc := &quire.Document{
			ID:          benchID(),
			Title:       benchTitle(r, zipf, vocab),
			ContentType: "markdown",
			OwnerID:     owner.ID, OwnerName: owner.Name,
			DepartmentID: owner.DepartmentID,
			Version:      1,
			Tags:         []string{},
		}
		doc.Summary = benchText(r, zipf, vocab, 60+r.IntN(60))
		doc.Content = benchText(r, zipf, vocab, 1800+r.IntN(400))
		doc.Status = quire.Statuses[r.IntN(len(quire.Statuses))]
		doc.Visibility = visibilities[r.IntN(len(visibilities))]
		if r.IntN(4) > 0 {
			doc.FolderID = d.Folders[r.IntN(len(d.Folders))].ID
		}
		if doc.Visibility == "project" {
			doc.ProjectID = d.Projects[r.IntN(len(d.Projects))].ID
		}
		at := d.Epoch.Add(time.Duration(r.Int64N(int64(365 * 24 * time.Hour)))).Truncate(time.Microsecond)
		doc.CreatedAt, doc.UpdatedAt = at, at
		for range r.IntN(5) {
			if t := tags[r.IntN(nTags)]; !containsFold(doc.Tags, t) {
				doc.Tags = append(doc.Tags, t)
			}
		}
		if err := emit(doc); err != nil {
			return err
		}
	}
	return nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// BenchFixture is a store holding a BenchData database, and what the
// benchmarks need to know of it.
type BenchFixture struct {
	Store   quire.Store
	Reader  quire.Visibility // the reader's (an editor's, not all-seeing)
	Visible []string         // IDs of up to 2000 documents the reader sees, in random order
	Search  string           // two words of middling frequency
}

// NewBenchFixture looks up the reader and the documents they see in s.
func NewBenchFixture(tb testing.TB, s quire.Store) *BenchFixture {
	tb.Helper()
	ctx := tb.Context()
	u, err := s.UserByEmail(ctx, BenchReaderEmail)
	if err != nil {
		tb.Fatalf("bench reader: %v", err)
	}
	fx := &BenchFixture{Store: s, Reader: quire.Visibility{UserID: u.ID, DepartmentID: u.DepartmentID}}
	docs, _, err := s.ListDocuments(ctx, quire.DocumentFilter{Visibility: fx.Reader, SortBy: "created_at", Limit: 2000})
	if err != nil {
		tb.Fatal(err)
	}
	if len(docs) == 0 {
		tb.Fatal("the reader sees no document: not a benchmark database")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, i := range r.Perm(len(docs)) {
		fx.Visible = append(fx.Visible, docs[i].ID)
	}
	vocab := benchVocabulary()
	fx.Search = vocab[100] + " " + vocab[250]
	return fx
}

// BenchOpener returns the fixture of a store holding n documents; with
// scratch, a copy of the database that the benchmark may change.
type BenchOpener func(b *testing.B, n int, scratch bool) *BenchFixture

// RunBench runs body as a sub-benchmark named docs=N for each N of
// BenchSizes, on the fixture open returns for N (a scratch copy when body
// writes).
func RunBench(b *testing.B, open BenchOpener, scratch bool, body func(*testing.B, *BenchFixture)) {
	for _, n := range BenchSizes {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) { body(b, open(b, n, scratch)) })
	}
}

// BenchList reads the first page of 20, newest first, with the total, as
// the reader.
func BenchList(b *testing.B, fx *BenchFixture) {
	f := quire.DocumentFilter{Visibility: fx.Reader, SortBy: "updated_at", Desc: true, Limit: 20}
	var total int
	for b.Loop() {
		docs, t, err := fx.Store.ListDocuments(b.Context(), f)
		if err != nil || len(docs) != 20 {
			b.Fatalf("list: %d documents, %v", len(docs), err)
		}
		total = t
	}
	b.ReportMetric(float64(total), "visible")
}

// BenchSearch finds two words, best first, first page of 20 with the
// total, as the reader.
func BenchSearch(b *testing.B, fx *BenchFixture) {
	f := quire.DocumentFilter{Visibility: fx.Reader, Search: fx.Search, SortBy: "relevance", Desc: true, Limit: 20}
	var total int
	for b.Loop() {
		docs, t, err := fx.Store.ListDocuments(b.Context(), f)
		if err != nil || len(docs) == 0 {
			b.Fatalf("search %q: %d documents, %v", fx.Search, len(docs), err)
		}
		total = t
	}
	b.ReportMetric(float64(total), "matches")
}

// BenchRead reads one visible document by id, content included, a
// different one each time.
func BenchRead(b *testing.B, fx *BenchFixture) {
	i := 0
	for b.Loop() {
		if _, err := fx.Store.Document(b.Context(), fx.Reader, fx.Visible[i%len(fx.Visible)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchGuardedUpdate saves a new body under the conflict guard, which also
// rewrites the document's search entry and records a version. It writes:
// give it a scratch copy of the database.
func BenchGuardedUpdate(b *testing.B, fx *BenchFixture) {
	ctx := b.Context()
	base := map[string]time.Time{}
	for _, id := range fx.Visible {
		d, err := fx.Store.Document(ctx, fx.Reader, id)
		if err != nil {
			b.Fatal(err)
		}
		base[id] = d.UpdatedAt
	}
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	i := 0
	for b.Loop() {
		id := fx.Visible[i%len(fx.Visible)]
		now = now.Add(time.Millisecond)
		d, err := fx.Store.UpdateDocument(ctx, fx.Reader, id, base[id], fx.Reader.UserID, now,
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
}

// BenchKey names a seeded benchmark database: a hash of every file of a
// store's migrations and of BenchGenerator, so that a cache built under
// another schema or other data is never reused.
func BenchKey(tb testing.TB, migrations fs.FS) string {
	h := sha256.New()
	io.WriteString(h, BenchGenerator)
	err := fs.WalkDir(migrations, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(migrations, path)
		h.Write([]byte(path))
		h.Write(body)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}
