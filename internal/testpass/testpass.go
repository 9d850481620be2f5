// Package testpass gives tests a password's hash at a test's cost.
package testpass

import (
	"encoding/base64"
	"fmt"
	"sync"

	"golang.org/x/crypto/argon2"
)

// Hash is password's argon2id hash at a test's cost (64 KiB, one pass)
// instead of OWASP's (19 MiB, two), in the same PHC form: the service
// verifies a hash with the parameters it records, so a user whose stored
// hash a test replaces with this one signs in by the same path, in a
// fraction of the time under -race. What the service hashes anew (a new
// user, a changed or reset password) is hashed at its own cost. The salt is
// fixed: this is for test passwords only.
func Hash(password string) string {
	if h, ok := hashes.Load(password); ok {
		return h.(string)
	}
	const mem, iters = 64, 1
	salt := []byte("quire-test-salt!")
	key := argon2.IDKey([]byte(password), salt, iters, mem, 1, 32)
	b64 := base64.RawStdEncoding
	h := fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, mem, iters, 1, b64.EncodeToString(salt), b64.EncodeToString(key))
	hashes.Store(password, h)
	return h
}

var hashes sync.Map // password → Hash(password)
