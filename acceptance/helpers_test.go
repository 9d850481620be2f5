package acceptance

import (
	"golang.org/x/net/html"

	"quire"
)

// signedIn is a new browser signed in through the sign-in form as email,
// a user created with testPassword.
func (e *env) signedIn(email string) *browser {
	e.t.Helper()
	b := e.browser()
	b.login(email, testPassword)
	return b
}

// signedInUser creates a user as e.user does and a browser signed in as them.
func (e *env) signedInUser(email, role, department string) (quire.User, *browser) {
	e.t.Helper()
	u := e.user(email, role, department)
	return u, e.signedIn(email)
}

// textsOf returns the texts of the elements under root that pick chooses,
// in document order.
func textsOf(root *html.Node, pick func(*html.Node) bool) []string {
	var out []string
	for _, n := range findAll(root, pick) {
		out = append(out, textOf(n))
	}
	return out
}

// tagged chooses the elements named tag.
func tagged(tag string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Type == html.ElementNode && n.Data == tag }
}
