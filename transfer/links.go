package transfer

import (
	"net/url"
	"path"
	"strings"
)

// Links are rewritten where a Markdown link or image destination starts
// ("](") or an HTML href or src attribute does. Both rewrites are one pass
// over the content: every search below resumes where the previous one of
// its kind stopped, so that no byte is searched more than a few times
// however the openings and closings are arranged ("](" a million times
// was quadratic when each link searched the rest of the text anew).

// linkStarts are the openings after which a destination starts.
var linkStarts = [...]string{"](", `href="`, `href='`, `src="`, `src='`}

// linkScanner finds the links of s, left to right, remembering where the
// next of each opening and closing is.
type linkScanner struct {
	s     string
	next  [len(linkStarts)]int // the next index of each opening; -1 none left
	quote [2]int               // the next '"' and '\'' ; -1 none left
	angle int                  // the next '>' or '\n'; -1 none left
	work  int                  // bytes searched, for the tests of linearity
}

func newLinkScanner(s string) *linkScanner {
	l := &linkScanner{s: s, angle: -2}
	for k := range l.next {
		l.next[k] = -2
	}
	l.quote = [2]int{-2, -2}
	return l
}

// find returns the first index at or after i where f finds something,
// from the cached *at when it is still ahead; -1 for none.
func (l *linkScanner) find(at *int, i int, f func(string) int) int {
	if *at == -1 || *at >= i {
		return *at
	}
	j := f(l.s[i:])
	if j < 0 {
		l.work += len(l.s) - i
		*at = -1
		return -1
	}
	l.work += j + 1
	*at = i + j
	return *at
}

// nextLink returns the index of the next destination at or after i and the
// quote that ends it (0 for a Markdown destination), or -1.
func (l *linkScanner) nextLink(i int) (int, byte) {
	best, quote := -1, byte(0)
	for k, open := range linkStarts {
		j := l.find(&l.next[k], i, func(s string) int { return strings.Index(s, open) })
		if j >= 0 && (best < 0 || j+len(open) < best) {
			best = j + len(open)
			quote = 0
			if c := open[len(open)-1]; c == '"' || c == '\'' {
				quote = c
			}
		}
	}
	return best, quote
}

// destination returns the end of the destination starting at i: the
// closing quote, or for Markdown the first space or ')' (or '>' when it
// opens with '<').
func (l *linkScanner) destination(i int, quote byte) int {
	if quote != 0 {
		k := 0
		if quote == '\'' {
			k = 1
		}
		if j := l.find(&l.quote[k], i, func(s string) int { return strings.IndexByte(s, quote) }); j >= 0 {
			return j
		}
		return i
	}
	s := l.s
	if i < len(s) && s[i] == '<' {
		if j := l.find(&l.angle, i, func(s string) int { return strings.IndexAny(s, ">\n") }); j >= 0 && s[j] == '>' {
			return j + 1
		}
		return i
	}
	j := i
	for j < len(s) && s[j] != ')' && s[j] != ' ' && s[j] != '\n' && s[j] != '\t' {
		j++
	}
	l.work += j - i
	return j
}

// rewriteLinks calls fn with each link destination of s (without angle
// brackets) and replaces it with what fn returns when ok.
func rewriteLinks(s string, fn func(dest string) (string, bool)) string {
	out, _ := scanLinks(s, fn)
	return out
}

// scanLinks is rewriteLinks, and how many bytes it searched.
func scanLinks(s string, fn func(dest string) (string, bool)) (string, int) {
	var b strings.Builder
	l := newLinkScanner(s)
	last := 0
	for i := 0; i < len(s); {
		start, quote := l.nextLink(i)
		if start < 0 {
			break
		}
		end := l.destination(start, quote)
		dest := s[start:end]
		angled := strings.HasPrefix(dest, "<") && strings.HasSuffix(dest, ">")
		if angled {
			dest = dest[1 : len(dest)-1]
		}
		if out, ok := fn(dest); ok {
			b.WriteString(s[last:start])
			if angled {
				out = "<" + out + ">"
			}
			b.WriteString(out)
			last = end
		}
		i = max(end, start+1)
	}
	if last == 0 {
		return s, l.work
	}
	b.WriteString(s[last:])
	return b.String(), l.work
}

// documentLink returns the document ID a destination links to
// ("/documents/{id}", relative or under base) and what follows it (a
// fragment or query).
func documentLink(dest, base string) (id, rest string, ok bool) {
	id, rest, ok = idAfter(dest, base, "/documents/")
	if !ok || !endsLink(rest) {
		return "", "", false
	}
	return id, rest, true
}

// attachmentLink returns the attachment ID a destination links to
// ("/api/documentation/attachments/{id}/content", relative or under base)
// and what follows it.
func attachmentLink(dest, base string) (id, rest string, ok bool) {
	id, rest, ok = idAfter(dest, base, "/api/documentation/attachments/")
	if !ok {
		return "", "", false
	}
	rest, found := strings.CutPrefix(rest, "/content")
	if !found || !endsLink(rest) {
		return "", "", false
	}
	return id, rest, true
}

// idAfter returns the 36-character ID that follows prefix at the start of
// dest (once base, when not "", is cut off) and what follows the ID.
func idAfter(dest, base, prefix string) (id, rest string, ok bool) {
	if base != "" {
		dest = strings.TrimPrefix(dest, base)
	}
	after, found := strings.CutPrefix(dest, prefix)
	if !found || len(after) < 36 {
		return "", "", false
	}
	return after[:36], after[36:], true
}

// endsLink reports whether rest may follow a link's path: nothing, a
// fragment or a query.
func endsLink(rest string) bool {
	return rest == "" || rest[0] == '#' || rest[0] == '?'
}

// escapePath escapes each segment of p for a link destination.
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// relative returns the path from the directory dir to target (both
// slash-separated, relative to the archive's root).
func relative(dir, target string) string {
	if dir == "." {
		dir = ""
	}
	from := strings.Split(dir, "/")
	if dir == "" {
		from = nil
	}
	to := strings.Split(target, "/")
	n := 0
	for n < len(from) && n < len(to)-1 && from[n] == to[n] {
		n++
	}
	return strings.Repeat("../", len(from)-n) + strings.Join(to[n:], "/")
}

// localTarget resolves a relative destination found in the file at dir to
// a path inside the archive and the fragment it carries; false for
// anything else (an absolute URL or path, a bare fragment, a path that
// leaves the archive).
func localTarget(dir, dest string) (target, fragment string, ok bool) {
	if dest == "" || dest[0] == '#' || dest[0] == '/' || strings.Contains(dest, "://") || strings.HasPrefix(dest, "mailto:") {
		return "", "", false
	}
	if i := strings.IndexAny(dest, ":"); i >= 0 && !strings.ContainsAny(dest[:i], "/?#") {
		return "", "", false // a scheme: data:, tel:, obsidian:
	}
	dest, fragment = splitFragment(dest)
	target = path.Clean(path.Join(dir, dest))
	if target == ".." || strings.HasPrefix(target, "../") || target == "." {
		return "", "", false
	}
	return target, fragment, true
}

// splitFragment cuts a link's destination into its unescaped path and its
// fragment ("#..."); a query ("?...") is dropped.
func splitFragment(dest string) (p, fragment string) {
	p = dest
	if i := strings.IndexAny(p, "#?"); i >= 0 {
		p, fragment = p[:i], p[i:]
		if fragment[0] == '?' {
			fragment = ""
		}
	}
	if u, err := url.PathUnescape(p); err == nil {
		p = u
	}
	return p, fragment
}
