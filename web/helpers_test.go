package web_test

import "quire"

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
