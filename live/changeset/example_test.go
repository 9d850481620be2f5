package changeset_test

import (
	"fmt"

	"quire/live/changeset"
)

// A change set as the browser sends it, applied by the authority, rebased
// by a client that typed concurrently, and written back.
func Example() {
	auth, err := changeset.NewAuthority("Hello world", 0, changeset.Limits{MaxText: 1 << 20, Keep: 100})
	if err != nil {
		panic(err)
	}
	// Alice, on count 0, replaces "world" with "😀 team".
	alice, err := changeset.Parse([]byte(`[6,[5,"😀 team"]]`))
	if err != nil {
		panic(err)
	}
	if _, err := auth.Receive(0, "alice", []changeset.ChangeSet{alice}); err != nil {
		panic(err)
	}
	// Bob typed "," after "Hello" on count 0 too: refused, he is behind.
	bob, _ := changeset.Replace(11, 5, 5, ",")
	_, err = auth.Receive(0, "bob", []changeset.ChangeSet{bob})
	fmt.Println(err)

	// Bob catches up and rebases his change over Alice's.
	missed, _ := auth.Since(0)
	rebased, _ := bob.Map(missed[0].Changes, false)
	if _, err := auth.Receive(1, "bob", []changeset.ChangeSet{rebased}); err != nil {
		panic(err)
	}
	out, _ := rebased.MarshalJSON()
	fmt.Println(string(out))
	fmt.Println(auth.Text(), auth.Count())
	// Output:
	// changes not made on the current count: made on 0, the count is 1
	// [5,[0,","],8]
	// Hello, 😀 team 2
}
