package live_test

import (
	"testing"

	"quire/live/livetest"
)

// TestNothingAppliedTwiceAfterAResync: a change the server stored but
// whose confirmation the editor never got, then saved into a version and
// trimmed, is applied once when the editor comes back to the whole text
// (livetest.LoseConfirmation), on a node started afresh on the same
// database (a restart).
func TestNothingAppliedTwiceAfterAResync(t *testing.T) {
	e := newEnv(t, nil)
	ada, cookie := e.User("ada@example.com", "editor")
	d := e.Document(ada, "hello")
	restarted := livetest.Start(t, e.Store, e.Clock, nil)
	livetest.LoseConfirmation(t, e, restarted, cookie, d.ID)
}
