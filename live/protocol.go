package live

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// The messages of the protocol (README, "Live editing"): text frames of
// JSON.

// incoming is any message a client sends; Type says which fields it uses.
type incoming struct {
	Type    string           `json:"type"`
	Version *int64           `json:"version"`
	Client  string           `json:"client"`
	Updates []incomingUpdate `json:"updates"`
	Anchor  *int             `json:"anchor"`
	Head    *int             `json:"head"`
	// Seq numbers the changes of a push: the client's own number of the
	// first (README, "Live editing"); none from older clients.
	Seq *int64 `json:"seq"`
}

type incomingUpdate struct {
	Changes json.RawMessage `json:"changes"`
}

// maxSeq bounds a push's number: an integer the browser holds exactly.
const maxSeq = 1<<53 - 1

// validClient reports whether a hello's client id is one: 1 to
// MaxClientID bytes of UTF-8 without control characters.
func validClient(id string) bool {
	if id == "" || len(id) > MaxClientID || !utf8.ValidString(id) {
		return false
	}
	return !strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// update is one change as sent to the clients.
type update struct {
	Client  string          `json:"client"`
	User    string          `json:"user"`
	Changes json.RawMessage `json:"changes"`
}

func updatesMessage(version int, ups []update) []byte {
	return mustJSON(struct {
		Type    string   `json:"type"`
		Version int      `json:"version"`
		Updates []update `json:"updates"`
	}{"updates", version, ups})
}

func refusedMessage(reason string, version int) []byte {
	return mustJSON(struct {
		Type    string `json:"type"`
		Reason  string `json:"reason"`
		Version int    `json:"version"`
	}{"refused", reason, version})
}

// stateMessage is the whole text for c; seq is the number of c's last
// change the text holds (0: none, or the client numbers none). ss.mu is
// held.
func (ss *session) stateMessage(c *conn, seq int64) []byte {
	return mustJSON(struct {
		Type     string `json:"type"`
		Version  int    `json:"version"`
		Text     string `json:"text"`
		ReadOnly bool   `json:"readonly"`
		You      Person `json:"you"`
		Seq      int64  `json:"seq"`
	}{"state", ss.auth.Count(), ss.auth.Text(), !c.editing, Person{ID: c.actor.User.ID, Name: c.actor.User.Name}, seq})
}

// cursor is a client's selection, in UTF-16 units of the text at Version.
type cursor struct {
	Version int64
	Anchor  int
	Head    int
}

type cursorOut struct {
	Client  string `json:"client"`
	User    Person `json:"user"`
	Version int64  `json:"version"`
	Anchor  int    `json:"anchor"`
	Head    int    `json:"head"`
}

// mustJSON marshals what this package builds, which always marshals.
// Without HTML escaping: the messages are read by JSON.parse, never put
// in a page, and a text of '<' and '>' (HTML, Markdown) would otherwise
// take six bytes a character on the wire and in the connections' queues.
func mustJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("live: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// utf16Len is the length of s in UTF-16 units, the editor's positions.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
