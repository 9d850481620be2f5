package storetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"quire"
)

func init() { register("SearchIndexEquivalence", testSearchIndexEquivalence) }

// equivalenceSeed drives every random draw of the equivalence test: a
// failure names it, and the same seed gives the same documents, changes and
// queries again.
const equivalenceSeed = 18

// testSearchIndexEquivalence compares, on thousands of random lists, the
// answers of a store that keeps a search index of its own (quire.
// SearchIndexer) with the index on and off: the same total and the same
// ids in the same order, before and after every kind of write the index
// must follow. The documents are drawn from a small vocabulary with a
// skewed frequency, so that searches find many documents and ranking and
// paging are really compared, and from words that stress a tokenizer:
// shared prefixes, case, digits, punctuation, markdown, diacritics,
// scripts other than Latin, emoji.
func testSearchIndexEquivalence(t *testing.T, open Opener) {
	s := open(t)
	ix, ok := s.(quire.SearchIndexer)
	if !ok {
		t.Skipf("%T keeps no search index of its own (it does not implement quire.SearchIndexer): nothing to compare", s)
	}
	t.Cleanup(func() { ix.UseSearchIndex(true) })
	w := newEqWorld(t, s, ix, equivalenceSeed)
	for range 150 {
		w.create(t)
	}

	// queries are compared before the changes, and as many after them;
	// quick are compared at once after each round of changes, whose
	// number of changes is multiplied by more.
	queries, quick, more := 2000, 20, 1.0
	if raceEnabled() {
		// Under the race detector a list on SQLite costs twenty to thirty
		// times as much (modernc's SQLite is Go, and instrumented): the
		// 4,000 lists are compared without it (go test ./sqlite -run
		// TestStore/SearchIndexEquivalence), some 150 with it.
		queries, quick, more, w.checkEvery = 60, 5, 0.5, 15
	}
	changes := func(n int) int { return int(float64(n) * more) }
	w.comparePhase(t, "after the documents were created", queries, true)
	// Each round of changes is compared twice: at once, without waiting
	// for the index (a list right after a write must see it, whether the
	// index has caught up or the store falls back), and after
	// SearchIndexReady.
	rounds := []struct {
		name   string
		change func(t *testing.T)
	}{
		{"after text, tags, status and visibility changed", func(t *testing.T) {
			w.mutate(t, changes(120), eqMenu{text: 4, tags: 3, attrs: 3, noop: 1})
		}},
		{"after documents went to the trash, came back, were purged and created", func(t *testing.T) {
			w.mutate(t, changes(120), eqMenu{trash: 4, restore: 2, purge: 1, create: 3})
		}},
		{"after project memberships changed and folders moved and were deleted", func(t *testing.T) {
			w.changeMembersAndFolders(t)
			w.mutate(t, changes(40), eqMenu{text: 1, tags: 1, attrs: 2, trash: 1, restore: 1, create: 1})
		}},
		{"after the trash was purged by age and everything changed at once", func(t *testing.T) {
			w.purgeTrash(t)
			w.mutate(t, changes(150), eqMenu{text: 3, tags: 2, attrs: 2, trash: 2, restore: 1, purge: 1, create: 2, noop: 1})
		}},
	}
	for _, r := range rounds {
		r.change(t)
		w.comparePhase(t, r.name+", without waiting for the index", quick, false)
		w.comparePhase(t, r.name, queries/len(rounds), true)
	}

	t.Logf("seed %d: %d documents live, %d in the trash; %d random lists compared, %d with matches, %d with more than 20, %d ranked searches with more than 20, %d answered by the index; %d lists right after a write",
		equivalenceSeed, len(w.live), len(w.trashed), w.all.n, w.all.hits, w.all.over20, w.all.rankedOver20, w.all.byIndex, w.changes/w.checkEvery)
}

// raceEnabled reports whether the test binary was built with -race.
func raceEnabled() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// The vocabulary. eqWords are drawn with a weight of 1/(rank+1)^1.1, the
// first most often: a common word is in most documents, the last ones in a
// few. The spellings of a word (release, Release, RELEASE, released, rel)
// and its accented and folded forms are separate entries, so that prefixes,
// case and diacritics are all compared.
var eqWords = []string{
	"release", "the", "deploy", "notes", "Release", "server", "alpha", "released", "guide", "café",
	"incident", "releases", "API", "database", "rel", "inc2198", "naïve", "runbook", "Ärger", "v2",
	"2026", "rollback", "straße", "cafe", "Ελληνικά", "東京", "RELEASE", "e\u0301cole", "école", "on",
	"call", "deployment", "deployed", "résumé", "resume", "über", "uber", "Łódź", "pager", "inc2199",
	"naive", "ärgerlich", "STRASSE", "ελληνικά", "東京駅", "日本語", "привет", "Привет", "İstanbul", "ﬁle",
	"µs", "x²", "١٢٣", "ǅemal", "Ωmega", "beta", "gamma", "latency", "p99", "http2",
	"OAuth", "oauth2", "k8s", "kubernetes", "Kube", "postgres", "sqlite", "FTS5", "bm25", "rank",
	"ranking", "ranked", "a", "I", "x", "zeta", "quire", "markdown", "Ünïcödé", "ß",
}

// eqTags are the tags documents carry, drawn the same way.
var eqTags = []string{
	"ops", "release", "Café", "on call", "runbook", "東京", "urgent", "release-notes", "Ärger", "inc2198",
	"v2", "Straße", "docs", "ΕΛΛΗΝΙΚΆ", "naïve", "k8s", "emoji 🚀", "draft", "Q4", "ß",
}

// eqOddWords are searched but in few documents or none: folded, upper-cased
// and misspelled forms of the vocabulary, and words of no document.
var eqOddWords = []string{
	"CAFÉ", "CAFE", "ecole", "ÉCOLE", "ECOLE", "arger", "ARGER", "aerger", "strasse", "STRAẞE", "ΕΛΛΗΝΙΚΆ",
	"ελληνικα", "東", "京", "tokyo", "lodz", "ŁÓDŹ", "istanbul", "i̇stanbul", "file", "fi", "us", "x2", "123",
	"dzemal", "ǄEMAL", "ωmega", "resume", "RÉSUMÉ", "uber", "ÜBER", "unicode", "zyzzyva", "qwxq", "nonexistent2199",
	"inc", "inc21", "2198", "INC2198", "p", "9", "k", "bm", "fts", "ﬁ",
}

// eqEmoji are dropped by every tokenizer, alone or glued to words.
var eqEmoji = []string{"🚀", "👍🏽", "🇩🇪", "👩‍💻", "✅"}

// eqWrap puts a word in the punctuation and markdown of a body.
var eqWrap = []func(string) string{
	func(w string) string { return "# " + w },
	func(w string) string { return "\n- " + w },
	func(w string) string { return "**" + w + "**" },
	func(w string) string { return "`" + w + "`" },
	func(w string) string { return "[" + w + "](https://example.com/" + w + ")" },
	func(w string) string { return "_" + w + "_" },
	func(w string) string { return w + "," },
	func(w string) string { return w + "." },
	func(w string) string { return "(" + w + ")" },
	func(w string) string { return "“" + w + "”" },
	func(w string) string { return `"` + w + `"` },
	func(w string) string { return w + "’s" },
	func(w string) string { return w + "—" },
	func(w string) string { return w + "🚀" },
	func(w string) string { return "<b>" + w + "</b>" },
	func(w string) string { return w + ":" },
	func(w string) string { return "#" + w },
	func(w string) string { return w + "/" + w },
}

// eqSeparators join the words of a text.
var eqSeparators = []string{" ", " ", " ", " ", " ", " ", "\n\n", ", ", " — ", "-", "_", "/", "\t", ""}

// zipf draws indexes below n with a weight of 1/(i+1)^1.1.
type zipf []float64 // cumulative weights

func newZipf(n int) zipf {
	z := make(zipf, n)
	sum := 0.0
	for i := range z {
		sum += 1 / math.Pow(float64(i+1), 1.1)
		z[i] = sum
	}
	return z
}

func (z zipf) draw(r *rand.Rand) int {
	return sort.SearchFloat64s(z, r.Float64()*z[len(z)-1])
}

// eqActor is someone who lists documents, with the visibility package docs
// would build for them.
type eqActor struct {
	name string
	vis  quire.Visibility
}

// eqStats counts the lists compared and how many found something, so that
// a comparison of empty answers cannot pass for a test.
type eqStats struct {
	n, hits, over20, rankedOver20 int
	// byIndex counts the lists the index answered itself, as the store's
	// stats report it (-1 when they do not).
	byIndex int64
}

func (s *eqStats) add(o eqStats) {
	s.n += o.n
	s.hits += o.hits
	s.over20 += o.over20
	s.rankedOver20 += o.rankedOver20
	s.byIndex += o.byIndex
}

// eqWorld is the store under test with its people, places and documents,
// and what the test knows of them.
type eqWorld struct {
	s          quire.Store
	ix         quire.SearchIndexer
	r          *rand.Rand
	now        time.Time
	words      zipf
	tags       zipf
	owners     []*quire.User
	actors     []eqActor
	depts      []*quire.Department
	projs      []*quire.Project
	folders    []*quire.Folder // those that exist
	allFolders []*quire.Folder // and those deleted
	doomed     *quire.Folder   // deleted by changeMembersAndFolders
	viewer     *quire.User
	live       []string // ids outside the trash
	trashed    []string
	labels     map[string]string          // id -> "#n", the order of creation, for messages
	docs       map[string]*quire.Document // as last written, for the lists checked after each write
	// checkEvery: every checkEvery-th change is followed at once by a list
	// that finds the document changed, compared without waiting.
	checkEvery int
	changes    int
	all        eqStats
	failures   int
}

func newEqWorld(t *testing.T, s quire.Store, ix quire.SearchIndexer, seed uint64) *eqWorld {
	t.Helper()
	ctx := t.Context()
	w := &eqWorld{s: s, ix: ix, r: rand.New(rand.NewPCG(seed, seed)), now: baseTime,
		words: newZipf(len(eqWords)), tags: newZipf(len(eqTags)), labels: map[string]string{},
		docs: map[string]*quire.Document{}, checkEvery: 3}
	for _, name := range []string{"Engineering", "Sales", "Ærø Ops"} {
		d := must(s.EnsureDepartment(ctx, name))(t)
		w.depts = append(w.depts, d)
	}
	for _, name := range []string{"Apollo", "Zeus", "Hermès"} {
		p := must(s.CreateProject(ctx, name))(t)
		w.projs = append(w.projs, p)
	}
	admin := newUser(t, s, "admin@example.com", "admin", "")
	editor := newUser(t, s, "editor@example.com", "editor", w.depts[0].ID)
	w.viewer = newUser(t, s, "viewer@example.com", "viewer", w.depts[1].ID)
	loner := newUser(t, s, "loner@example.com", "viewer", "")
	other := newUser(t, s, "other@example.com", "editor", w.depts[2].ID)
	for _, m := range []struct {
		p *quire.Project
		u *quire.User
	}{{w.projs[0], editor}, {w.projs[2], editor}, {w.projs[1], w.viewer}, {w.projs[1], other}} {
		if err := s.AddProjectMember(ctx, m.p.ID, m.u.ID); err != nil {
			t.Fatal(err)
		}
	}
	w.owners = []*quire.User{editor, editor, w.viewer, other, admin, loner}
	w.actors = []eqActor{
		{"an admin (sees all)", seeAll},
		{"an editor of Engineering in Apollo and Hermès", sees(editor)},
		{"a viewer of Sales in Zeus", sees(w.viewer)},
		{"a user with no department and no project", sees(loner)},
	}
	eng := newFolder(t, s, "Engineering", "", baseTime)
	runbooks := newFolder(t, s, "Runbooks", eng.ID, baseTime)
	db := newFolder(t, s, "Database", runbooks.ID, baseTime)
	sales := newFolder(t, s, "Sales", "", baseTime)
	uni := newFolder(t, s, "Ünïcödé 東京", "", baseTime)
	w.doomed = newFolder(t, s, "Doomed", "", baseTime)
	w.folders = []*quire.Folder{eng, runbooks, db, sales, uni, w.doomed}
	w.allFolders = slices.Clone(w.folders)
	return w
}

// tick moves the clock by 0 to 2 seconds: several documents share an
// updated_at, so that ties on it are ordered by id.
func (w *eqWorld) tick() time.Time {
	w.now = w.now.Add(time.Duration(w.r.IntN(3)) * time.Second)
	return w.now
}

func (w *eqWorld) word() string { return eqWords[w.words.draw(w.r)] }

// text is n words of the vocabulary, joined and decorated as markdown is.
func (w *eqWorld) text(n int, decorate bool) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(eqSeparators[w.r.IntN(len(eqSeparators))])
		}
		word := w.word()
		switch p := w.r.IntN(100); {
		case p < 5:
			// The same word again and again, which weighs in its rank.
			word = strings.TrimSpace(strings.Repeat(word+" ", 2+w.r.IntN(5)))
		case p < 8:
			word = strings.ToUpper(word)
		case p < 10:
			word += eqEmoji[w.r.IntN(len(eqEmoji))]
		}
		if decorate && w.r.IntN(4) == 0 {
			word = eqWrap[w.r.IntN(len(eqWrap))](word)
		}
		b.WriteString(word)
	}
	return b.String()
}

func (w *eqWorld) title() string {
	t := w.text(1+w.r.IntN(5), false)
	if w.r.IntN(3) == 0 {
		// Title case, so that the title order meets upper and lower case.
		r, n := utf8.DecodeRuneInString(t)
		t = strings.ToUpper(string(r)) + t[n:]
	}
	return t
}

// tagList is 0 to 5 tags, none repeating another ignoring case, as package
// docs stores them.
func (w *eqWorld) tagList() []string {
	tags := []string{}
	seen := map[string]bool{}
	for range w.r.IntN(6) {
		tag := eqTags[w.tags.draw(w.r)]
		if w.r.IntN(8) == 0 {
			tag = strings.ToUpper(tag)
		}
		if key := strings.ToLower(tag); !seen[key] {
			seen[key] = true
			tags = append(tags, tag)
		}
	}
	return tags
}

// place sets the status, visibility, department, project and folder of d.
func (w *eqWorld) place(d *quire.Document) {
	d.Status = quire.Statuses[w.r.IntN(len(quire.Statuses))]
	d.Visibility = quire.Visibilities[w.r.IntN(len(quire.Visibilities))]
	d.DepartmentID, d.ProjectID, d.FolderID = "", "", ""
	if d.Visibility == "department" || w.r.IntN(3) == 0 {
		d.DepartmentID = w.depts[w.r.IntN(len(w.depts))].ID
	}
	if d.Visibility == "project" || w.r.IntN(4) == 0 {
		d.ProjectID = w.projs[w.r.IntN(len(w.projs))].ID
	}
	if w.r.IntN(3) > 0 {
		d.FolderID = w.folders[w.r.IntN(len(w.folders))].ID
	}
}

// create adds a document of random text, place and owner.
func (w *eqWorld) create(t *testing.T) {
	t.Helper()
	d := &quire.Document{Title: w.title(), Summary: w.text(w.r.IntN(10), false),
		Content: w.text(w.r.IntN(25), true), Tags: w.tagList(),
		ContentType: quire.ContentTypes[w.r.IntN(len(quire.ContentTypes))],
		OwnerID:     w.owners[w.r.IntN(len(w.owners))].ID}
	w.place(d)
	if w.r.IntN(10) == 0 {
		// An import keeps its dates, older than any other document's.
		d.CreatedAt = baseTime.Add(-time.Duration(1+w.r.IntN(1000)) * time.Hour)
		d.UpdatedAt = d.CreatedAt.Add(time.Duration(w.r.IntN(1000)) * time.Minute)
	}
	if err := w.s.CreateDocument(t.Context(), d, w.tick()); err != nil {
		t.Fatalf("create document %q: %v", d.Title, err)
	}
	w.labels[d.ID] = fmt.Sprintf("#%d", len(w.labels)+1)
	w.live = append(w.live, d.ID)
	w.docs[d.ID] = d
}

// eqMenu weighs the kinds of change mutate draws.
type eqMenu struct {
	text, tags, attrs, noop, trash, restore, purge, create int
}

// mutate makes n changes drawn from menu, each through the store's public
// methods as the services make them.
func (w *eqWorld) mutate(t *testing.T, n int, menu eqMenu) {
	t.Helper()
	ctx := t.Context()
	kinds := []struct {
		weight int
		do     func() string // the document changed, "" when it found none
	}{
		{menu.text, func() string {
			return w.update(t, func(d *quire.Document) bool {
				switch w.r.IntN(4) {
				case 0:
					d.Title = w.title()
				case 1:
					d.Summary = w.text(w.r.IntN(10), false)
				case 2:
					d.Content += "\n\n" + w.text(1+w.r.IntN(20), true)
				default:
					d.Title, d.Content = w.title(), w.text(w.r.IntN(25), true)
				}
				return true
			})
		}},
		{menu.tags, func() string {
			return w.update(t, func(d *quire.Document) bool {
				if len(d.Tags) > 0 && w.r.IntN(3) == 0 {
					// The same tags spelled otherwise: the words and the
					// filter stay, the text of the tags changes.
					d.Tags = slices.Clone(d.Tags)
					d.Tags[0] = strings.ToUpper(d.Tags[0])
				} else {
					d.Tags = w.tagList()
				}
				return true
			})
		}},
		{menu.attrs, func() string {
			return w.update(t, func(d *quire.Document) bool { w.place(d); return true })
		}},
		{menu.noop, func() string {
			return w.update(t, func(d *quire.Document) bool { return false })
		}},
		{menu.trash, func() string {
			if len(w.live) == 0 {
				return ""
			}
			id := w.take(&w.live)
			if err := w.s.DeleteDocument(ctx, seeAll, id, w.owners[0].ID, w.tick()); err != nil {
				t.Fatalf("delete document %s: %v", w.labels[id], err)
			}
			w.trashed = append(w.trashed, id)
			return id
		}},
		{menu.restore, func() string {
			if len(w.trashed) == 0 {
				return ""
			}
			id := w.take(&w.trashed)
			if _, err := w.s.RestoreDocument(ctx, seeAll, id); err != nil {
				t.Fatalf("restore document %s: %v", w.labels[id], err)
			}
			w.live = append(w.live, id)
			return id
		}},
		{menu.purge, func() string {
			if len(w.trashed) == 0 {
				return ""
			}
			id := w.take(&w.trashed)
			if err := w.s.PurgeDocument(ctx, seeAll, id); err != nil {
				t.Fatalf("purge document %s: %v", w.labels[id], err)
			}
			return id
		}},
		{menu.create, func() string { w.create(t); return w.live[len(w.live)-1] }},
	}
	sum := 0
	for _, k := range kinds {
		sum += k.weight
	}
	for done := 0; done < n; {
		p := w.r.IntN(sum)
		for _, k := range kinds {
			if p < k.weight {
				if id := k.do(); id != "" {
					done++
					if w.changes++; w.changes%w.checkEvery == 0 {
						w.checkAfterWrite(t, id)
					}
				}
				break
			}
			p -= k.weight
		}
	}
}

// take removes a random id from ids and returns it.
func (w *eqWorld) take(ids *[]string) string {
	i := w.r.IntN(len(*ids))
	id := (*ids)[i]
	*ids = slices.Delete(*ids, i, i+1)
	return id
}

// update applies change to a random live document through UpdateDocument;
// change reports whether it changed anything.
func (w *eqWorld) update(t *testing.T, change func(d *quire.Document) bool) string {
	t.Helper()
	if len(w.live) == 0 {
		return ""
	}
	id := w.live[w.r.IntN(len(w.live))]
	d, err := w.s.UpdateDocument(t.Context(), seeAll, id, time.Time{}, w.owners[0].ID, w.tick(),
		func(d *quire.Document) (bool, error) { return change(d), nil })
	if err != nil {
		t.Fatalf("update document %s: %v", w.labels[id], err)
	}
	w.docs[id] = d
	return id
}

// changeMembersAndFolders changes what the store knows beside the
// documents that a list reads: who is in which project, which folder is
// below which, and a folder deleted under documents of the trash (restored
// in no folder).
func (w *eqWorld) changeMembersAndFolders(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	if err := w.s.RemoveProjectMember(ctx, w.projs[1].ID, w.viewer.ID); err != nil {
		t.Fatal(err)
	}
	if err := w.s.AddProjectMember(ctx, w.projs[0].ID, w.viewer.ID); err != nil {
		t.Fatal(err)
	}
	// Database moves from Engineering/Runbooks to Sales.
	db := w.folders[2]
	db.ParentID = w.folders[3].ID
	if err := w.s.UpdateFolder(ctx, db, w.tick()); err != nil {
		t.Fatal(err)
	}
	// Every document of Doomed goes to the trash, the folder is deleted,
	// and half of them come back.
	docs, _, err := w.s.ListDocuments(ctx, quire.DocumentFilter{Visibility: seeAll, FolderID: w.doomed.ID})
	if err != nil {
		t.Fatal(err)
	}
	var back []string
	for i, d := range docs {
		if err := w.s.DeleteDocument(ctx, seeAll, d.ID, w.owners[0].ID, w.tick()); err != nil {
			t.Fatal(err)
		}
		w.live = slices.DeleteFunc(w.live, func(id string) bool { return id == d.ID })
		if i%2 == 0 {
			back = append(back, d.ID)
		} else {
			w.trashed = append(w.trashed, d.ID)
		}
	}
	if err := w.s.DeleteFolder(ctx, w.doomed.ID); err != nil {
		t.Fatal(err)
	}
	w.folders = slices.DeleteFunc(w.folders, func(f *quire.Folder) bool { return f == w.doomed })
	for _, id := range back {
		if _, err := w.s.RestoreDocument(ctx, seeAll, id); err != nil {
			t.Fatal(err)
		}
		w.live = append(w.live, id)
	}
	w.doomed = nil
	t.Logf("%d documents of the deleted folder went to the trash, %d came back", len(docs), len(back))
}

// purgeTrash purges the older half of the trash by age, as the scheduled
// job does, and reads what is left.
func (w *eqWorld) purgeTrash(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	if _, err := w.s.PurgeTrash(ctx, w.now.Add(time.Second), len(w.trashed)/2, nil); err != nil {
		t.Fatal(err)
	}
	left, _, err := w.s.Trash(ctx, quire.TrashFilter{Visibility: seeAll})
	if err != nil {
		t.Fatal(err)
	}
	w.trashed = w.trashed[:0]
	for _, d := range left {
		w.trashed = append(w.trashed, d.ID)
	}
}

// searchTerm is one word of a search: mostly a word of the vocabulary,
// else a prefix of one, its upper case, an odd form, a tag, or a word in
// punctuation.
func (w *eqWorld) searchTerm() string {
	switch p := w.r.IntN(100); {
	case p < 40:
		return w.word()
	case p < 60:
		r := []rune(w.word())
		return string(r[:1+w.r.IntN(len(r))])
	case p < 68:
		return strings.ToUpper(w.word())
	case p < 80:
		return eqOddWords[w.r.IntN(len(eqOddWords))]
	case p < 85:
		return eqTags[w.tags.draw(w.r)]
	case p < 98:
		wraps := []string{`"%s"`, "%s*", "(%s)", "%s,", "-%s", "%s:", "“%s”", "%s—" + w.word(), "NEAR(%s)",
			"%s OR", "^%s", "%s'", "title:%s", "%s AND NOT", "{%s}", "%s🚀", "'%s'", "%s\"", "*%s"}
		return fmt.Sprintf(wraps[w.r.IntN(len(wraps))], w.word())
	default:
		// No word at all: a search that matches nothing.
		return []string{"🚀", "—", "…", "\"\"", "*", "\u0301\u0301"}[w.r.IntN(6)]
	}
}

// filter draws one list: a search (mostly, ranked best first), or filters
// alone, as one of the actors, one page of it.
func (w *eqWorld) filter() (quire.DocumentFilter, string) {
	actor := w.actors[w.r.IntN(len(w.actors))]
	f := quire.DocumentFilter{Visibility: actor.vis, SortBy: "relevance", Desc: true}
	search := w.r.IntN(4) > 0
	if search {
		terms := make([]string, 1+w.r.IntN(3))
		for i := range terms {
			terms[i] = w.searchTerm()
		}
		f.Search = strings.Join(terms, []string{" ", " ", " ", "  ", ", ", "\t"}[w.r.IntN(6)])
	}
	switch p := w.r.IntN(100); {
	case p < 15:
		f.Desc = false
	case p < 30 || !search && p < 60:
		f.SortBy = []string{"updated_at", "created_at", "title", "status", ""}[w.r.IntN(5)]
		f.Desc = w.r.IntN(2) == 0
	}
	if w.r.IntN(100) < 30 {
		f.Status = quire.Statuses[w.r.IntN(len(quire.Statuses))]
	}
	if p := w.r.IntN(100); !search && p < 60 || search && p < 15 {
		for range 1 + w.r.IntN(2) {
			tag := strings.ToLower(strings.TrimSpace(eqTags[w.tags.draw(w.r)]))
			if w.r.IntN(20) == 0 {
				tag = "no such tag"
			}
			if !slices.Contains(f.Tags, tag) {
				f.Tags = append(f.Tags, tag)
			}
		}
	}
	if w.r.IntN(100) < 15 {
		f.VisibilityIs = quire.Visibilities[w.r.IntN(len(quire.Visibilities))]
	}
	// The filters by reference sometimes name nothing.
	pick := func(ids ...string) string {
		if w.r.IntN(10) == 0 {
			return unknownID
		}
		return ids[w.r.IntN(len(ids))]
	}
	if w.r.IntN(100) < 12 {
		f.DepartmentID = pick(w.deptIDs()...)
	}
	if w.r.IntN(100) < 10 {
		f.ProjectID = pick(w.projIDs()...)
	}
	if w.r.IntN(100) < 15 {
		f.FolderID = pick(w.folderIDs()...)
		f.Subfolders = w.r.IntN(2) == 0
	}
	// Only ids are compared, but the page is read as a search reads it.
	switch p := w.r.IntN(100); {
	case p < 10:
		f.IncludeContent = true
	case p < 30:
		f.ContentPrefix = 300
	}
	switch p := w.r.IntN(100); {
	case p < 60:
		f.Limit = 20
	case p < 80:
		f.Limit = 5
	}
	switch p := w.r.IntN(100); {
	case p < 20:
		f.Offset = 20
	case p < 28:
		f.Offset = 1000 // a page past the end
	case p < 36:
		f.Offset = w.r.IntN(60)
	}
	return f, actor.name
}

// comparePhase compares n random lists with the index on and off, after
// waiting for the index when wait is set, and then checks that enough of
// them found something.
func (w *eqWorld) comparePhase(t *testing.T, phase string, n int, wait bool) {
	t.Helper()
	if wait {
		if err := w.ix.SearchIndexReady(t.Context()); err != nil {
			t.Fatalf("SearchIndexReady %s: %v", phase, err)
		}
	}
	var st eqStats
	before := w.listsByIndex(t)
	for i := range n {
		f, actor := w.filter()
		total := w.compare(t, fmt.Sprintf("%s, list %d", phase, i), f, actor)
		st.n++
		if total > 0 {
			st.hits++
		}
		if total > 20 {
			st.over20++
			if f.Search != "" && f.SortBy == "relevance" {
				st.rankedOver20++
			}
		}
	}
	if before >= 0 {
		st.byIndex = w.listsByIndex(t) - before
	}
	w.all.add(st)
	t.Logf("%s: %d lists compared, %d with matches, %d with more than 20, %d ranked searches with more than 20, %d answered by the index",
		phase, st.n, st.hits, st.over20, st.rankedOver20, st.byIndex)
	// A comparison of empty answers would pass against any index: at least
	// a third of the lists must find something, and one in ten must find
	// more than a page, searches ranked by relevance among them.
	if wait && (st.hits < n/3 || st.over20 < n/10 || st.rankedOver20 < n/20) {
		t.Errorf("seed %d, %s: of %d lists only %d found something, %d more than 20, %d ranked searches more than 20: the comparison says too little",
			equivalenceSeed, phase, n, st.hits, st.over20, st.rankedOver20)
	}
	// Nor would a comparison of the store's queries with themselves, the
	// index falling back on every list: three lists in four are searches
	// or filter by tags, which the index is for.
	if wait && before >= 0 && st.byIndex < int64(n/2) {
		t.Errorf("seed %d, %s: the index answered %d of %d lists itself: the comparison compares the store's queries with themselves",
			equivalenceSeed, phase, st.byIndex, n)
	}
}

// checkAfterWrite compares, right after a write and without waiting for
// the index, a list that the document id changed: a search for its title,
// or its status and first tag, as it was last written (before it went to
// the trash, or was purged).
func (w *eqWorld) checkAfterWrite(t *testing.T, id string) {
	t.Helper()
	d := w.docs[id]
	f := quire.DocumentFilter{Visibility: seeAll, Search: d.Title, SortBy: "relevance", Desc: true, Limit: 20}
	if w.changes%(2*w.checkEvery) == 0 {
		f = quire.DocumentFilter{Visibility: seeAll, Status: d.Status, SortBy: "updated_at", Desc: true, Limit: 20}
		if len(d.Tags) > 0 {
			f.Tags = []string{strings.ToLower(d.Tags[0])}
		}
	}
	w.compare(t, fmt.Sprintf("right after change %d (of %s), without waiting for the index", w.changes, w.labels[id]),
		f, w.actors[0].name)
}

// compare lists f with the index on and off and reports any difference;
// it returns the total of the store's own queries. A store whose queries
// rank by relevance otherwise than its index (SearchIndexRanksApart) is
// held to the same totals and page sizes and the same matches, unordered.
func (w *eqWorld) compare(t *testing.T, what string, f quire.DocumentFilter, actor string) int {
	t.Helper()
	ctx := t.Context()
	w.ix.UseSearchIndex(true)
	on, onTotal, onErr := w.s.ListDocuments(ctx, f)
	w.ix.UseSearchIndex(false)
	off, offTotal, offErr := w.s.ListDocuments(ctx, f)
	w.ix.UseSearchIndex(true)
	if onErr != nil || offErr != nil {
		t.Fatalf("seed %d, %s, as %s: ListDocuments(%s): index on: %v; index off: %v",
			equivalenceSeed, what, actor, w.describe(f), onErr, offErr)
	}
	onIDs, offIDs := w.ids(on), w.ids(off)
	if ra, ok := w.s.(interface{ SearchIndexRanksApart() bool }); ok && ra.SearchIndexRanksApart() &&
		f.Search != "" && f.SortBy == "relevance" && onTotal == offTotal && len(onIDs) == len(offIDs) {
		// The store's queries rank otherwise than the index (PostgreSQL's
		// ts_rank, the index's bm25): the same matches, and the same
		// total, in another order. Compare all of them, as sets.
		all := f
		all.Offset, all.Limit = 0, 0
		w.ix.UseSearchIndex(true)
		on, _, onErr = w.s.ListDocuments(ctx, all)
		w.ix.UseSearchIndex(false)
		off, _, offErr = w.s.ListDocuments(ctx, all)
		w.ix.UseSearchIndex(true)
		if onErr != nil || offErr != nil {
			t.Fatalf("seed %d, %s, as %s: ListDocuments(%s) unpaged: index on: %v; index off: %v",
				equivalenceSeed, what, actor, w.describe(all), onErr, offErr)
		}
		onIDs, offIDs = w.ids(on), w.ids(off)
		slices.Sort(onIDs)
		slices.Sort(offIDs)
	}
	if onTotal != offTotal || !slices.Equal(onIDs, offIDs) {
		t.Errorf("seed %d, %s, as %s: ListDocuments(%s):\nindex on:  total %d, %v\nindex off: total %d, %v",
			equivalenceSeed, what, actor, w.describe(f), onTotal, onIDs, offTotal, offIDs)
		if w.failures++; w.failures == 10 {
			t.Fatalf("seed %d: stopped after %d different answers", equivalenceSeed, w.failures)
		}
	}
	return offTotal
}

func (w *eqWorld) deptIDs() []string {
	ids := []string{}
	for _, d := range w.depts {
		ids = append(ids, d.ID)
	}
	return ids
}

func (w *eqWorld) projIDs() []string {
	ids := []string{}
	for _, p := range w.projs {
		ids = append(ids, p.ID)
	}
	return ids
}

// folderIDs are those of every folder, deleted ones included.
func (w *eqWorld) folderIDs() []string {
	ids := []string{}
	for _, f := range w.allFolders {
		ids = append(ids, f.ID)
	}
	return ids
}

// describe prints f with the names of the people, departments, projects
// and folders it names in place of their ids.
func (w *eqWorld) describe(f quire.DocumentFilter) string {
	var names []string
	for _, u := range w.owners {
		names = append(names, u.ID, "user:"+u.Email)
	}
	for _, d := range w.depts {
		names = append(names, d.ID, "department:"+d.Name)
	}
	for _, p := range w.projs {
		names = append(names, p.ID, "project:"+p.Name)
	}
	for _, f := range w.allFolders {
		names = append(names, f.ID, "folder:"+f.Name)
	}
	return strings.NewReplacer(names...).Replace(fmt.Sprintf("%+v", f)) + fmt.Sprintf(", search %q", f.Search)
}

// listsByIndex returns how many lists the index answered since the store
// opened, or -1 when the store's stats do not say.
func (w *eqWorld) listsByIndex(t *testing.T) int64 {
	t.Helper()
	st := must(w.s.Stats(t.Context()))(t)
	if st.Index == nil {
		return -1
	}
	return st.Index.ListsByIndex
}

// ids are the labels of docs in order.
func (w *eqWorld) ids(docs []quire.Document) []string {
	ids := make([]string, len(docs))
	for i, d := range docs {
		if ids[i] = w.labels[d.ID]; ids[i] == "" {
			ids[i] = d.ID
		}
	}
	return ids
}
