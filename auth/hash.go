package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"time"

	"golang.org/x/crypto/argon2"
	"golang.org/x/text/unicode/norm"

	"quire"
)

// Argon2id parameters: OWASP's minimum for argon2id (19 MiB, t=2, p=1),
// which the contract requires as a floor.
const (
	argonMemory  = 19 * 1024 // KiB
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

// hasher bounds the number of argon2id computations running at once: each
// takes 19 MiB and a core for tens of milliseconds, so an unbounded login
// flood would starve every other request. Half the cores (at least one)
// may hash: with as many slots as cores, a login flood kept every core
// hashing and reads waited behind it (on two cores, a list at half its
// usual rate answered in 340 ms at p99 instead of 55). Callers queue for a
// slot up to queueWait, then get 503.
type hasher struct {
	slots     chan struct{}
	queueWait time.Duration
	stats     *stats // the queue's figures (stats.go)
}

// defaultHashQueueWait is the queue wait when the configuration names none.
const defaultHashQueueWait = 5 * time.Second

func newHasher(queueWait time.Duration, st *stats) *hasher {
	if queueWait <= 0 {
		queueWait = defaultHashQueueWait
	}
	n := max(1, runtime.GOMAXPROCS(0)/2)
	return &hasher{slots: make(chan struct{}, n), queueWait: queueWait, stats: st}
}

var errBusy = &quire.Error{Code: quire.EUNAVAILABLE, Message: "The server is busy, please try again shortly.", RetryAfter: time.Second}

// acquire waits for a hashing slot. The returned func releases it.
func (h *hasher) acquire(ctx context.Context) (func(), error) {
	select {
	case h.slots <- struct{}{}:
		h.stats.hashWait.Observe(0)
		return h.release, nil
	default:
	}
	began := time.Now()
	h.stats.hashWaiting.Add(1)
	defer h.stats.hashWaiting.Add(-1)
	t := time.NewTimer(h.queueWait)
	defer t.Stop()
	select {
	case h.slots <- struct{}{}:
		h.observeWait(began)
		return h.release, nil
	case <-t.C:
		h.observeWait(began)
		h.stats.hashRefused.Add(1)
		return nil, errBusy
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (h *hasher) release() { <-h.slots }

// makeRoom runs a collection when another block of size bytes would take
// the heap past the collector's goal; hash and verify call it with the
// size of the block just used before they give back the slot, so that the
// next hash allocates after the collection. After a hash its block (19 MiB) is
// garbage; the next hash's block would be allocated beside it and start a
// collection, which cannot free the old block before it ends: both blocks
// held at once, and the next goal set from a heap that held one of them
// live (twice that, with the pages kept). Collected now, the old block is
// freed and the next takes its pages. The collection was coming anyway;
// it only comes earlier, at one a hash when the heap has no room for two
// blocks (at 100,000 documents: 40 collections for 40 sign-ins instead of
// 13, 38 ms of CPU a sign-in instead of 31, a peak RSS of 129 MiB instead
// of 187; bench/README.md).
func makeRoom(size uint64) {
	if size == 0 {
		return
	}
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	for _, x := range s {
		if x.Value.Kind() != metrics.KindUint64 {
			return
		}
	}
	if s[1].Value.Uint64()+size > s[0].Value.Uint64() {
		runtime.GC()
	}
}

// normalizePassword returns password in Unicode normalisation form NFKC,
// as NIST SP 800-63B asks of a verifier that accepts any characters: "é"
// typed as one code point or as "e" and a combining accent is one password,
// whatever the keyboard or the operating system sent. Every password is
// normalised before it is judged (CheckPassword), hashed or verified.
func normalizePassword(password string) string { return norm.NFKC.String(password) }

// HashPassword returns the PHC-encoded argon2id hash of password in NFKC.
func HashPassword(password string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("salt: %w", err)
	}
	key := argon2.IDKey([]byte(normalizePassword(password)), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemory, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

var errBadHash = errors.New("malformed password hash")

// VerifyPassword reports whether password matches the PHC-encoded hash,
// using the parameters recorded in the hash, compared in constant time. It
// checks password in NFKC and, when that is not what was typed and does not
// match, the typed form once more: a hash made before passwords were
// normalised (see verifyPassword).
func VerifyPassword(encoded, password string) (bool, error) {
	ok, _, err := verifyPassword(encoded, password)
	return ok, err
}

// verifyPassword is VerifyPassword that also reports, as stale, a match of
// the typed form only: the hash was made from a password that was not in
// NFKC, and should be made again from the NFKC form (which the same user
// typing the same thing will send from now on). A password already in NFKC
// (every ASCII one) costs one hash, another two whether or not it matches,
// so the time of an answer tells nothing about the account.
func verifyPassword(encoded, password string) (ok, stale bool, err error) {
	key, err := parseHash(encoded)
	if err != nil {
		return false, false, err
	}
	normal := normalizePassword(password)
	if key.matches(normal) {
		return true, false, nil
	}
	if normal != password && key.matches(password) {
		return true, true, nil
	}
	return false, false, nil
}

// argonHash is a parsed PHC-encoded argon2id hash.
type argonHash struct {
	mem, iters uint32
	threads    uint8
	salt, want []byte
}

// matches reports, in constant time, whether password hashes to h.
func (h argonHash) matches(password string) bool {
	got := argon2.IDKey([]byte(password), h.salt, h.iters, h.mem, h.threads, uint32(len(h.want)))
	return subtle.ConstantTimeCompare(got, h.want) == 1
}

func parseHash(encoded string) (argonHash, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return argonHash{}, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return argonHash{}, errBadHash
	}
	var h argonHash
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &h.mem, &h.iters, &h.threads); err != nil || h.threads == 0 {
		return argonHash{}, errBadHash
	}
	b64 := base64.RawStdEncoding
	var err error
	if h.salt, err = b64.DecodeString(parts[4]); err != nil {
		return argonHash{}, errBadHash
	}
	if h.want, err = b64.DecodeString(parts[5]); err != nil || len(h.want) == 0 {
		return argonHash{}, errBadHash
	}
	return h, nil
}

// hash computes a password hash in a bounded slot.
func (s *Service) hash(ctx context.Context, password string) (string, error) {
	release, err := s.hasher.acquire(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	if s.cfg.HashPassword != nil {
		return s.cfg.HashPassword(password)
	}
	defer makeRoom(argonMemory << 10) // before release
	return HashPassword(password)
}

// blockSize is the bytes of the block an argon2id hash with the parameters
// of encoded allocates (0 when it is malformed).
func blockSize(encoded string) uint64 {
	h, err := parseHash(encoded)
	if err != nil {
		return 0
	}
	return uint64(h.mem) << 10
}

// verify checks a password against a hash in a bounded slot. An empty
// encoded hash (an invited user, or no user at all) is checked against a
// dummy hash so that the answer takes the same time, and is never a match.
func (s *Service) verify(ctx context.Context, encoded, password string) (bool, error) {
	release, err := s.hasher.acquire(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	if encoded == "" {
		defer makeRoom(blockSize(s.dummyHash))
		VerifyPassword(s.dummyHash, password)
		return false, nil
	}
	defer makeRoom(blockSize(encoded)) // before release
	return VerifyPassword(encoded, password)
}

// newToken returns 32 random bytes, URL-safe base64 without padding.
func newToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// hashToken is how tokens are stored: SHA-256 of the token. Tokens carry
// 256 bits of entropy, so a fast hash is enough.
func hashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}
