package transfer

import (
	"net/url"
	"path"
	"strings"
)

// Links are rewritten where a Markdown link or image destination starts
// ("](") or an HTML href or src attribute does. Both rewrites are one pass
// over the content.

// linkStarts are the openings after which a destination starts.
var linkStarts = []string{"](", `href="`, `href='`, `src="`, `src='`}

// nextLink returns the index of the next destination at or after i and the
// quote that ends it (0 for a Markdown destination), or -1.
func nextLink(s string, i int) (int, byte) {
	best, quote := -1, byte(0)
	for _, open := range linkStarts {
		j := strings.Index(s[i:], open)
		if j >= 0 && (best < 0 || i+j+len(open) < best) {
			best = i + j + len(open)
			quote = 0
			if open[len(open)-1] == '"' || open[len(open)-1] == '\'' {
				quote = open[len(open)-1]
			}
		}
	}
	return best, quote
}

// destination returns the end of the destination starting at i: the
// closing quote, or for Markdown the first space or ')' (or '>' when it
// opens with '<').
func destination(s string, i int, quote byte) int {
	if quote != 0 {
		if j := strings.IndexByte(s[i:], quote); j >= 0 {
			return i + j
		}
		return i
	}
	if i < len(s) && s[i] == '<' {
		if j := strings.IndexAny(s[i:], ">\n"); j >= 0 && s[i+j] == '>' {
			return i + j + 1
		}
		return i
	}
	j := i
	for j < len(s) && s[j] != ')' && s[j] != ' ' && s[j] != '\n' && s[j] != '\t' {
		j++
	}
	return j
}

// rewriteLinks calls fn with each link destination of s (without angle
// brackets) and replaces it with what fn returns when ok.
func rewriteLinks(s string, fn func(dest string) (string, bool)) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		start, quote := nextLink(s, i)
		if start < 0 {
			break
		}
		end := destination(s, start, quote)
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
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// documentLink returns the document ID a destination links to
// ("/documents/{id}", relative or under base) and what follows it (a
// fragment or query).
func documentLink(dest, base string) (id, rest string, ok bool) {
	if base != "" {
		dest = strings.TrimPrefix(dest, base)
	}
	after, found := strings.CutPrefix(dest, "/documents/")
	if !found || len(after) < 36 {
		return "", "", false
	}
	id, rest = after[:36], after[36:]
	if rest != "" && rest[0] != '#' && rest[0] != '?' {
		return "", "", false
	}
	return id, rest, true
}

// attachmentLink returns the attachment ID a destination links to
// ("/api/documentation/attachments/{id}/content", relative or under base)
// and what follows it.
func attachmentLink(dest, base string) (id, rest string, ok bool) {
	if base != "" {
		dest = strings.TrimPrefix(dest, base)
	}
	after, found := strings.CutPrefix(dest, "/api/documentation/attachments/")
	if !found || len(after) < 36 {
		return "", "", false
	}
	id, rest = after[:36], after[36:]
	rest, found = strings.CutPrefix(rest, "/content")
	if !found || (rest != "" && rest[0] != '#' && rest[0] != '?') {
		return "", "", false
	}
	return id, rest, true
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
	if i := strings.IndexAny(dest, "#?"); i >= 0 {
		dest, fragment = dest[:i], dest[i:]
		if fragment[0] == '?' {
			fragment = ""
		}
	}
	if u, err := url.PathUnescape(dest); err == nil {
		dest = u
	}
	target = path.Clean(path.Join(dir, dest))
	if target == ".." || strings.HasPrefix(target, "../") || target == "." {
		return "", "", false
	}
	return target, fragment, true
}
