package quire

// ValidID reports whether s has the canonical form of the identifiers quire
// issues (a UUID in lower-case hex with hyphens). Anything else names no
// record, so the services answer it without asking the store: a store need
// never see an identifier its database might refuse to compare.
func ValidID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return true
}
