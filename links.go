package quire

import (
	"net/url"
	"regexp"
	"strings"
)

// MaxLinks bounds how many documents one document's links are recorded
// to: the first MaxLinks distinct ones in the content.
const MaxLinks = 1000

// linkRE finds a link target whose path ends in /documents/{id}: what
// opens it (a Markdown inline link "](", a reference definition "]:", an
// autolink or angle-bracketed destination "<", or an HTML href), what comes
// before /documents/ (empty, or a scheme, host and path), the id, and an
// optional query or fragment, up to where the target ends. RE2 runs in
// time linear in the content.
var linkRE = regexp.MustCompile(`(?:\]\([ \t]*<?|\]:[ \t]*<?|<|(?i:href)[ \t]*=[ \t]*["']?)` +
	`([^\s"'<>()\[\]]*?)/documents/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})` +
	`(?:[?#][^\s"'<>()]*)?(?:[\s"'>)]|$)`)

// LinkedDocuments returns the ids of the documents that content (of
// contentType) links to, in order of first appearance, each once, at most
// MaxLinks. A link is a Markdown link (inline, reference definition or
// autolink) or an HTML href whose target's path is /documents/{id}: either
// relative ("/documents/{id}", with an optional query or fragment) or
// absolute under publicURL (the server's --public-url; "" accepts relative
// links only). Plain text links to nothing. Links written inside code are
// counted too: telling them apart would need a full Markdown parse.
func LinkedDocuments(contentType, content, publicURL string) []string {
	if contentType != "html" && contentType != "markdown" {
		return nil
	}
	base := linkBase(publicURL)
	var ids []string
	seen := map[string]bool{}
	for _, line := range linkLines(content) {
		for _, m := range linkRE.FindAllStringSubmatchIndex(line, -1) {
			prefix, id := line[m[2]:m[3]], line[m[4]:m[5]]
			if prefix != "" && (base == "" || linkBase(prefix) != base) {
				continue
			}
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
				if len(ids) == MaxLinks {
					return ids
				}
			}
		}
	}
	return ids
}

// linkLines returns the lines of content (each with its newline) that
// hold "/documents/", in order: the only ones where linkRE can match, and
// where it finds what it finds in the whole content. Every match holds
// "/documents/", and nothing of it before that can be a newline (its
// opener, blanks and prefix exclude them), while after the id it ends at
// the first newline at the latest, which it may take as its end; so each
// match lies within one line, and a line's matches are the same alone as
// in the whole. The expression has no literal prefix to look for, so run
// on the whole content it starts from every byte: 14 % of the CPU of
// concurrent creates, inside the writer's transaction. Each line is
// looked at once.
func linkLines(content string) []string {
	const marker = "/documents/"
	var lines []string
	for pos := 0; pos < len(content); {
		i := strings.Index(content[pos:], marker)
		if i < 0 {
			break
		}
		i += pos
		start := pos + strings.LastIndexByte(content[pos:i], '\n') + 1
		end := len(content)
		if j := strings.IndexByte(content[i:], '\n'); j >= 0 {
			end = i + j + 1
		}
		lines = append(lines, content[start:end])
		pos = end
	}
	return lines
}

// linkBase is the form in which a public URL and a link's prefix are
// compared: scheme and host in lower case, the path without a final
// slash, nothing else. "" when s is not an absolute http(s) URL.
func linkBase(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return ""
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + strings.TrimSuffix(u.EscapedPath(), "/")
}

// BacklinkFilter selects a page of the documents that link to one.
type BacklinkFilter struct {
	Visibility    Visibility
	TargetID      string
	Offset, Limit int // Limit <= 0: no limit
}
