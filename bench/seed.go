package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"quire"
	"quire/auth"
	"quire/sqlstore"
)

// seedVersion changes whenever the generated data changes, so that a cached
// database made by an older generator is not reused.
const seedVersion = 4

// benchPassword is every seeded user's password. It is long enough for the
// policy and not in the common-password list.
const benchPassword = "bench-correct-horse-battery-staple"

// seedInfo is what the load generator needs to know about a seeded database.
// It is written beside the cached database once seeding has finished, so its
// presence marks a complete cache.
type seedInfo struct {
	N          int        `json:"n"`
	Users      []seedUser `json:"users"`
	Editor     string     `json:"editor"`     // the email of the user the document scenarios run as
	EditorDocs []string   `json:"editorDocs"` // ids of documents the editor owns (for updates)
	Visible    []string   `json:"visible"`    // ids of documents the editor may read
	Searches   []string   `json:"searches"`   // two rare words of a document the editor may read, each
	Seconds    float64    `json:"seconds"`    // how long seeding took
}

type seedUser struct {
	Email, Role string
}

// schemaKey identifies the migrations of dialect ("sqlite" or "postgres"),
// as this build renders them, so that a schema change invalidates the cache.
func schemaKey(dialect string) (string, error) {
	ms, err := sqlstore.Migrations(dialect)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, m := range ms {
		fmt.Fprintf(h, "%s\x00%d\x00", m.Name, len(m.SQL))
		h.Write([]byte(m.SQL))
	}
	return fmt.Sprintf("v%d-%s", seedVersion, hex.EncodeToString(h.Sum(nil))[:12]), nil
}

func readSeedInfo(path string) (*seedInfo, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var si seedInfo
	if err := json.Unmarshal(b, &si); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &si, nil
}

func writeSeedInfo(path string, si *seedInfo) error {
	b, err := json.MarshalIndent(si, "", " ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// seed fills an empty store with n documents and the users, departments,
// projects and folders they refer to, writing through the store's own
// methods (the same transactions quire runs) with several writers at once.
func seed(ctx context.Context, store quire.Store, n, writers int, progress io.Writer) (*seedInfo, error) {
	start := time.Now()
	r := rand.New(rand.NewPCG(uint64(n), seedVersion))
	hash, err := auth.HashPassword(benchPassword)
	if err != nil {
		return nil, err
	}

	deptNames := []string{"Engineering", "Sales", "Support", "Marketing", "Finance", "Legal", "Operations", "Research"}
	var depts []quire.Department
	for _, name := range deptNames {
		d, err := store.EnsureDepartment(ctx, name)
		if err != nil {
			return nil, err
		}
		depts = append(depts, *d)
	}

	// Several users of each role; the editors and admins own the documents.
	type member struct {
		user     quire.User
		projects []string
	}
	var people []*member
	si := &seedInfo{N: n}
	for _, rc := range []struct {
		role  string
		count int
	}{{"admin", 3}, {"editor", 24}, {"viewer", 24}, {"guest", 3}} {
		for i := 1; i <= rc.count; i++ {
			u := quire.User{
				Email:        fmt.Sprintf("%s%d@bench.example", rc.role, i),
				Name:         fmt.Sprintf("%s %d", strings.ToUpper(rc.role[:1])+rc.role[1:], i),
				Role:         quire.Role{Key: rc.role},
				DepartmentID: depts[(i-1)%len(depts)].ID,
				Status:       quire.UserActive,
				PasswordHash: hash,
			}
			if err := store.CreateUser(ctx, &u); err != nil {
				return nil, fmt.Errorf("create user %s: %w", u.Email, err)
			}
			people = append(people, &member{user: u})
			si.Users = append(si.Users, seedUser{Email: u.Email, Role: rc.role})
		}
	}
	si.Editor = "editor1@bench.example"

	// Projects with a handful of members each; every editor is in some.
	for i := 1; i <= 20; i++ {
		p, err := store.CreateProject(ctx, fmt.Sprintf("Project %s", titleCase(vocabulary[200+i*7])))
		if err != nil {
			return nil, err
		}
		for _, m := range people {
			if r.IntN(5) == 0 || (m.user.Email == si.Editor && i%4 == 1) {
				if err := store.AddProjectMember(ctx, p.ID, m.user.ID); err != nil {
					return nil, err
				}
				m.projects = append(m.projects, p.ID)
			}
		}
	}

	// A two-level folder tree.
	now := time.Now()
	var folders []string
	for i := 0; i < 10; i++ {
		top := quire.Folder{Name: titleCase(vocabulary[300+i])}
		if err := store.CreateFolder(ctx, &top, now); err != nil {
			return nil, err
		}
		folders = append(folders, top.ID)
		for j := 0; j < 4; j++ {
			sub := quire.Folder{Name: titleCase(vocabulary[400+i*4+j]), ParentID: top.ID}
			if err := store.CreateFolder(ctx, &sub, now); err != nil {
				return nil, err
			}
			folders = append(folders, sub.ID)
		}
	}

	var owners []*member
	for _, m := range people {
		if m.user.Role.Key == "editor" || m.user.Role.Key == "admin" {
			owners = append(owners, m)
		}
	}
	var editor *member
	for _, m := range people {
		if m.user.Email == si.Editor {
			editor = m
		}
	}

	// Documents, generated from a per-document random source so that the
	// data do not depend on the interleaving of the writers.
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	span := 2 * 365 * 24 * time.Hour
	var (
		next    atomic.Int64
		mu      sync.Mutex
		firstEr error
		wg      sync.WaitGroup
	)
	const keep = 5000
	// Searches come from about a thousand documents at any n, of which
	// those the editor may read give one each. They are drawn from each
	// document's own random source, not by index: every tenth index belongs
	// to the editor. Sorted by index, they do not depend on the writers'
	// timing.
	type search struct {
		doc   int
		words string
	}
	var searches []search
	sampleOdds := max(1, n/1000)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				dr := rand.New(rand.NewPCG(uint64(i), uint64(n)))
				owner := owners[dr.IntN(len(owners))]
				if i%10 == 0 {
					owner = editor // the bench editor owns a tenth, for updates
				}
				d := genDocument(dr, owner.user, owner.projects, folders)
				at := base.Add(time.Duration(float64(span) * float64(i) / float64(n)))
				err := store.CreateDocument(ctx, d, at)
				// A save the database could not finish in time (a
				// statement timeout on a machine busy with other work:
				// quire answers it 503) is made again, as a client would,
				// rather than end a seed of an hour.
				for try := 1; try < 4 && errors.Is(err, quire.ErrUnavailable) && ctx.Err() == nil; try++ {
					if progress != nil {
						fmt.Fprintf(progress, "  document %d: %v; again (%d)\n", i, err, try)
					}
					time.Sleep(time.Duration(try) * time.Second)
					err = store.CreateDocument(ctx, d, at) // d is as it was: a failed save leaves it
				}
				if err != nil {
					mu.Lock()
					if firstEr == nil {
						firstEr = fmt.Errorf("create document %d: %w", i, err)
					}
					mu.Unlock()
					return
				}
				var found string
				if dr.IntN(sampleOdds) == 0 && visibleTo(d, editor.user, editor.projects) {
					found, _ = searchPair(dr, d.Title, d.Summary, d.Content)
				}
				mu.Lock()
				if found != "" {
					searches = append(searches, search{i, found})
				}
				if d.OwnerID == editor.user.ID && len(si.EditorDocs) < keep {
					si.EditorDocs = append(si.EditorDocs, d.ID)
				}
				if visibleTo(d, editor.user, editor.projects) && len(si.Visible) < keep && dr.IntN(4) == 0 {
					si.Visible = append(si.Visible, d.ID)
				}
				mu.Unlock()
				if i > 0 && i%50000 == 0 && progress != nil {
					fmt.Fprintf(progress, "  seeded %d/%d documents (%.0f/s)\n", i, n, float64(i)/time.Since(start).Seconds())
				}
			}
		}()
	}
	wg.Wait()
	if firstEr != nil {
		return nil, firstEr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sort.Slice(searches, func(a, b int) bool { return searches[a].doc < searches[b].doc })
	for _, s := range searches {
		si.Searches = append(si.Searches, s.words)
	}
	si.Seconds = time.Since(start).Seconds()
	return si, nil
}

func visibleTo(d *quire.Document, u quire.User, projects []string) bool {
	switch {
	case d.OwnerID == u.ID, d.Visibility == "public":
		return true
	case d.Visibility == "department":
		return d.DepartmentID != "" && d.DepartmentID == u.DepartmentID
	case d.Visibility == "project":
		for _, p := range projects {
			if p == d.ProjectID {
				return true
			}
		}
	}
	return false
}

// pick returns an index in [0, n) drawn with a Zipf-like bias to the start,
// for the few tags a document carries.
func pick(r *rand.Rand, n int) int {
	// The cube of a uniform variable concentrates on small ranks without
	// the long flat tail of a true Zipf, which keeps rare tags rare enough.
	x := r.Float64()
	return int(x * x * x * float64(n))
}

func words(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(drawWord(r))
	}
	return b.String()
}

func titleCase(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

func weighted(r *rand.Rand, values []string, weights []int) string {
	total := 0
	for _, w := range weights {
		total += w
	}
	x := r.IntN(total)
	for i, w := range weights {
		if x < w {
			return values[i]
		}
		x -= w
	}
	return values[len(values)-1]
}

// genDocument makes a document of about 1-2 KB of markdown.
func genDocument(r *rand.Rand, owner quire.User, projects, folders []string) *quire.Document {
	d := &quire.Document{
		Title:       titleCase(words(r, 3+r.IntN(6))),
		Summary:     titleCase(words(r, 10+r.IntN(15))) + ".",
		ContentType: weighted(r, []string{"markdown", "plain", "html"}, []int{80, 15, 5}),
		Status:      weighted(r, []string{"draft", "review", "published", "archived"}, []int{30, 15, 45, 10}),
		Visibility:  weighted(r, []string{"private", "department", "project", "public"}, []int{25, 30, 20, 25}),
		OwnerID:     owner.ID,
	}
	var b strings.Builder
	b.WriteString("# " + d.Title + "\n\n")
	for size := 900 + r.IntN(1000); b.Len() < size; {
		if r.IntN(4) == 0 {
			b.WriteString("## " + titleCase(words(r, 2+r.IntN(3))) + "\n\n")
		}
		for s := 2 + r.IntN(4); s > 0; s-- {
			b.WriteString(titleCase(words(r, 6+r.IntN(12))) + ". ")
		}
		b.WriteString("\n\n")
	}
	d.Content = b.String()
	if r.IntN(10) < 8 {
		d.FolderID = folders[r.IntN(len(folders))]
	}
	if d.Visibility == "department" || r.IntN(2) == 0 {
		d.DepartmentID = owner.DepartmentID
	}
	if len(projects) > 0 && (d.Visibility == "project" || r.IntN(4) == 0) {
		d.ProjectID = projects[r.IntN(len(projects))]
	} else if d.Visibility == "project" {
		d.Visibility = "department"
		d.DepartmentID = owner.DepartmentID
	}
	seen := map[string]bool{}
	for t := r.IntN(6); t > 0; t-- {
		tag := tagPool[pick(r, len(tagPool))]
		if !seen[tag] {
			seen[tag] = true
			d.Tags = append(d.Tags, tag)
		}
	}
	return d
}
