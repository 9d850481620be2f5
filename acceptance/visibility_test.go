package acceptance

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"golang.org/x/net/html"
)

// options returns the values of the options of the select with that id.
func options(p *page, id string) []string {
	sel := p.byID(id)
	if sel == nil {
		return nil
	}
	var vals []string
	for _, o := range findAll(sel, func(n *html.Node) bool { return n.Type == html.ElementNode && n.Data == "option" }) {
		vals = append(vals, attr(o, "value"))
	}
	return vals
}

func TestVisibilityChoicesFitTheEditor(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	root := e.user("root@example.com", "admin", "")
	lone := e.user("lone@example.com", "editor", "")
	member := e.user("member@example.com", "editor", "Engineering")
	ctx := context.Background()
	apollo, err := e.store.CreateProject(ctx, "Apollo")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateProject(ctx, "Borealis"); err != nil {
		t.Fatal(err)
	}
	if err := e.store.AddProjectMember(ctx, apollo.ID, member.ID); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		who              string
		email            string
		visibility, proj []string
	}{
		{"an editor with no department and no project", lone.Email, []string{"private", "public"}, nil},
		{"an editor of a department and a project", member.Email, []string{"private", "department", "project", "public"}, []string{"", apollo.ID}},
		{"an administrator without a department sees every project", root.Email, []string{"private", "project", "public"}, nil},
	} {
		t.Run(tc.who, func(t *testing.T) {
			b := e.signedIn(tc.email)
			p := b.get("/documents/new")
			if got := options(p, "visibility"); !slices.Equal(got, tc.visibility) {
				t.Errorf("visibility options %v, want %v", got, tc.visibility)
			}
			got := options(p, "project_id")
			if tc.proj != nil && !slices.Equal(got, tc.proj) {
				t.Errorf("project options %v, want %v", got, tc.proj)
			}
			if tc.email == root.Email && len(got) != 3 {
				t.Errorf("an administrator is offered %v, want none and both projects", got)
			}
		})
	}

	t.Run("a choice that is not possible names its field", func(t *testing.T) {
		b := e.signedIn(lone.Email)
		form := url.Values{"title": {"Plan"}, "content": {"x"}, "content_type": {"markdown"}, "status": {"draft"}}
		for vis, want := range map[string][2]string{
			"department": {"err-department_id", "Department is required for department visibility"},
			"project":    {"err-project_id", "Project is required for project visibility"},
		} {
			form.Set("visibility", vis)
			p := b.post("/documents", form)
			if p.Status != http.StatusBadRequest || p.text(want[0]) != want[1] {
				t.Errorf("%s: %d %q", vis, p.Status, p.text(want[0]))
			}
		}
	})
}
