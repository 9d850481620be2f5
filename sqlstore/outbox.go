package sqlstore

import (
	"strings"
)

// NoNULText replaces U+0000, which a PostgreSQL text column cannot hold,
// in text that quire composes itself (mails, delivery errors) from what a
// client or a remote server sent.
func NoNULText(s string) string { return strings.ReplaceAll(s, "\x00", "\uFFFD") }
