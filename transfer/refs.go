package transfer

import (
	"path"
	"strings"

	"quire/internal/slug"
)

// The links other wikis write besides inline ones ("[x](a.md)", links.go):
// reference definitions ("[x]: ../a.md"), site-absolute paths ("/docs/a/"
// in a Hugo or MkDocs tree) and wikilinks ("[[a]]", "[[a|label]]",
// "[[a#heading]]", "![[shot.png]]": Obsidian, Foam, Dendron). Each scan is
// one pass over the text, and each lookup one map access per candidate.

// eachLine calls fn with each line of s (without its "\n") that is outside
// a fenced code block, with the line's start offset.
func eachLine(s string, fn func(start int, line string)) {
	fence := ""
	for i := 0; i < len(s); {
		end := strings.IndexByte(s[i:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += i
		}
		line := s[i:end]
		t := strings.TrimLeft(line, " \t")
		switch {
		case fence != "":
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fence = t[:3]
		default:
			fn(i, line)
		}
		i = end + 1
	}
}

// rewriteRefs calls fn with the destination of each reference definition
// of s ("[label]: dest" or "[label]: <dest>", at most three spaces in) and
// replaces it with what fn returns when ok. Footnotes ("[^1]: ...") are not
// links.
func rewriteRefs(s string, fn func(dest string) (string, bool)) string {
	var b strings.Builder
	last := 0
	eachLine(s, func(start int, line string) {
		t := strings.TrimLeft(line, " ")
		if len(line)-len(t) > 3 || !strings.HasPrefix(t, "[") || strings.HasPrefix(t, "[^") {
			return
		}
		close := strings.IndexAny(t[1:], "[]")
		if close < 0 || t[1+close] != ']' || close == 0 || !strings.HasPrefix(t[2+close:], ":") {
			return
		}
		at := len(line) - len(t) + 3 + close // after ":"
		rest := line[at:]
		trimmed := strings.TrimLeft(rest, " \t")
		at += len(rest) - len(trimmed)
		var dest string
		var dStart, dEnd int
		if strings.HasPrefix(trimmed, "<") {
			j := strings.IndexByte(trimmed, '>')
			if j < 0 {
				return
			}
			dest, dStart, dEnd = trimmed[1:j], at+1, at+j
		} else {
			j := strings.IndexAny(trimmed, " \t\r")
			if j < 0 {
				j = len(trimmed)
			}
			dest, dStart, dEnd = trimmed[:j], at, at+j
		}
		if dest == "" {
			return
		}
		if out, ok := fn(dest); ok {
			b.WriteString(s[last : start+dStart])
			b.WriteString(out)
			last = start + dEnd
		}
	})
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// wikiLink is one "[[name#heading|label]]" (Embed: "![[...]]").
type wikiLink struct {
	Name, Heading, Label string
	Embed                bool
}

// rewriteWikilinks calls fn with each wikilink of s outside fenced code and
// replaces it (its "!" included for an embed) with what fn returns when ok.
// A wikilink ends at the first "]]" of its line and holds no "[" or "]".
func rewriteWikilinks(s string, fn func(w wikiLink) (string, bool)) string {
	var b strings.Builder
	last := 0
	eachLine(s, func(start int, line string) {
		if !strings.Contains(line, "[[") {
			return
		}
		spans := codeSpans(line)
		for i := 0; i+1 < len(line); {
			j := strings.Index(line[i:], "[[")
			if j < 0 {
				return
			}
			open := i + j
			for len(spans) > 0 && spans[0][1] <= open {
				spans = spans[1:]
			}
			if len(spans) > 0 && spans[0][0] <= open {
				i = spans[0][1] // inside `code`: text
				continue
			}
			k := open + 2
			for k < len(line) && line[k] != '[' && line[k] != ']' {
				k++
			}
			if k+1 >= len(line) || line[k] != ']' || line[k+1] != ']' || k == open+2 {
				i = max(k, open+1)
				continue
			}
			inner := line[open+2 : k]
			w := wikiLink{Embed: open > 0 && line[open-1] == '!'}
			target, label, hasLabel := strings.Cut(inner, "|")
			target = strings.TrimSuffix(target, `\`) // "[[a\|b]]" inside a table
			w.Name, w.Heading, _ = strings.Cut(target, "#")
			w.Name, w.Heading = strings.TrimSpace(w.Name), strings.TrimSpace(w.Heading)
			if hasLabel {
				w.Label = strings.TrimSpace(label)
			}
			from := open
			if w.Embed {
				from--
			}
			if out, ok := fn(w); ok && w.Name != "" {
				b.WriteString(s[last : start+from])
				b.WriteString(out)
				last = start + k + 2
			}
			i = k + 2
		}
	})
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// codeSpans returns the code spans of a line (a run of backticks to the
// next run of the same length), in order, as [start, end) offsets.
// Linear: each run's closing run is found from a table built in one
// backward pass.
func codeSpans(line string) [][2]int {
	type run struct{ at, n int }
	var runs []run
	for i := 0; i < len(line); {
		if line[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(line) && line[j] == '`' {
			j++
		}
		runs = append(runs, run{i, j - i})
		i = j
	}
	if len(runs) < 2 {
		return nil
	}
	next := make([]int, len(runs)) // the next run of the same length, or -1
	last := map[int]int{}
	for k := len(runs) - 1; k >= 0; k-- {
		next[k] = -1
		if m, ok := last[runs[k].n]; ok {
			next[k] = m
		}
		last[runs[k].n] = k
	}
	var spans [][2]int
	for k := 0; k < len(runs); {
		m := next[k]
		if m < 0 {
			k++ // an unmatched run is text
			continue
		}
		spans = append(spans, [2]int{runs[k].at, runs[m].at + runs[m].n})
		k = m + 1
	}
	return spans
}

// headingAnchor is the fragment of the id quire's pages give a heading
// ("h-" and its slug, as the renderer makes it).
func headingAnchor(h string) string { return "#h-" + slug.Of(h) }

// archiveIndex finds the file of the archive that a link names.
type archiveIndex struct {
	known map[string]bool // every file's clean path
	// tails maps each path and each of its tails (a path without its
	// first directories) to the path with the shortest such prefix; ""
	// when two paths tie (ambiguous).
	tails map[string]tail
	// names maps a file's name in lower case (and a Markdown file's
	// without its extension) to the paths that have it.
	names map[string][]string
	best  map[string]string // a name's shortest path, once looked up
}

type tail struct {
	path  string
	strip int // directories stripped
}

func newArchiveIndex() *archiveIndex {
	return &archiveIndex{known: map[string]bool{}, tails: map[string]tail{}, names: map[string][]string{}, best: map[string]string{}}
}

// add records the file at the clean path p.
func (x *archiveIndex) add(p string) {
	if x.known[p] {
		return
	}
	x.known[p] = true
	for strip, rest := 0, p; ; strip++ {
		if t, ok := x.tails[rest]; !ok || strip < t.strip {
			x.tails[rest] = tail{path: p, strip: strip}
		} else if strip == t.strip && t.path != p {
			x.tails[rest] = tail{strip: strip}
		}
		_, after, found := strings.Cut(rest, "/")
		if !found {
			break
		}
		rest = after
	}
	base := strings.ToLower(path.Base(p))
	x.names[base] = append(x.names[base], p)
	if isMarkdown(base) {
		noExt := strings.TrimSuffix(base, path.Ext(base))
		x.names[noExt] = append(x.names[noExt], p)
	}
}

// pageCandidates are the files a link to the path p (without a fragment)
// may name: itself, with .md, as a directory's index (Hugo's _index.md and
// page bundles, MkDocs' index.md, a repository's README.md), or the .md of
// a built .html page.
func pageCandidates(p string) []string {
	c := []string{p}
	if path.Ext(p) == "" {
		c = append(c, p+".md", p+"/index.md", p+"/_index.md", p+"/README.md")
	} else if strings.EqualFold(path.Ext(p), ".html") {
		noExt := strings.TrimSuffix(p, path.Ext(p))
		c = append(c, noExt+".md")
		if path.Base(noExt) == "index" {
			c = append(c, path.Dir(noExt)+"/_index.md", path.Dir(noExt)+"/README.md")
		}
	}
	return c
}

// local resolves a link destination found in the file at dir to a file of
// the archive and the fragment it carries: a relative path, or a
// site-absolute one ("/docs/a/") that names exactly one file once the
// archive's leading directories (a "content/" or "docs/" root) are set aside.
func (x *archiveIndex) local(dir, dest string) (target, fragment string, ok bool) {
	if strings.HasPrefix(dest, "/") && !strings.HasPrefix(dest, "//") {
		var p string
		p, fragment = splitFragment(dest)
		p = strings.TrimPrefix(path.Clean(p), "/")
		if strings.Contains(p, ":") {
			return "", "", false
		}
		candidates := []string{"index.md", "_index.md", "README.md"} // the site's home, "/"
		if p != "" {
			candidates = pageCandidates(p)
		}
		for _, c := range candidates {
			if t, ok := x.tails[c]; ok && t.path != "" {
				return t.path, fragment, true
			}
		}
		return "", "", false
	}
	target, fragment, ok = localTarget(dir, dest)
	if !ok {
		return "", "", false
	}
	for _, c := range pageCandidates(target) {
		if x.known[c] {
			return c, fragment, true
		}
	}
	return target, fragment, true
}

// wiki resolves a wikilink's name found in the file at dir as Obsidian
// does: a path from the vault's root (with or without .md), else a file
// name, the one in dir first, else the one with the shortest path (the
// first in name order among those).
func (x *archiveIndex) wiki(dir, name string) (string, bool) {
	name = strings.TrimPrefix(path.Clean("/"+name), "/")
	if name == "" {
		return "", false
	}
	if strings.Contains(name, "/") {
		for _, c := range []string{name, name + ".md"} {
			if x.known[c] {
				return c, true
			}
			if t, ok := x.tails[c]; ok && t.path != "" {
				return t.path, true
			}
		}
		return "", false
	}
	for _, c := range []string{path.Join(dir, name), path.Join(dir, name) + ".md"} {
		if x.known[c] {
			return c, true
		}
	}
	key := strings.ToLower(name)
	if best, ok := x.best[key]; ok {
		return best, best != ""
	}
	best := ""
	for _, p := range x.names[key] {
		if best == "" || strings.Count(p, "/") < strings.Count(best, "/") || (strings.Count(p, "/") == strings.Count(best, "/") && p < best) {
			best = p
		}
	}
	x.best[key] = best // each name's paths are looked through once
	return best, best != ""
}

// eachTarget calls fn with the archive path of every link of body (a file
// at dir), of every kind.
func eachTarget(body, dir string, ix *archiveIndex, fn func(target string)) {
	link := func(dest string) (string, bool) {
		if t, _, ok := ix.local(dir, dest); ok {
			fn(t)
		}
		return "", false
	}
	rewriteLinks(body, link)
	rewriteRefs(body, link)
	rewriteWikilinks(body, func(w wikiLink) (string, bool) {
		if t, ok := ix.wiki(dir, w.Name); ok {
			fn(t)
		}
		return "", false
	})
}

// rewriteBody rewrites the links of body (a file at dir) that name a file
// of the archive, of every kind: resolve gives an archive path's URL,
// whether it is a file (not a document) and false when it was not
// imported. A link that names no file of the archive is passed to other.
// A wikilink becomes a Markdown link ("![...](...)" for an embedded file),
// labelled with its label, else its name; a heading it names becomes the
// anchor quire gives that heading (a block reference, "#^id", is dropped).
func rewriteBody(body, dir string, ix *archiveIndex, resolve func(target string) (url string, file, ok bool),
	other func(dest string) (string, bool)) string {
	link := func(dest string) (string, bool) {
		if t, fragment, ok := ix.local(dir, dest); ok {
			if u, _, ok := resolve(t); ok {
				return u + fragment, true
			}
			return "", false
		}
		return other(dest)
	}
	body = rewriteLinks(body, link)
	body = rewriteRefs(body, link)
	return rewriteWikilinks(body, func(w wikiLink) (string, bool) {
		t, ok := ix.wiki(dir, w.Name)
		if !ok {
			return "", false
		}
		u, file, ok := resolve(t)
		if !ok {
			return "", false
		}
		label := w.Label
		if label == "" {
			label = w.Name
			if w.Heading != "" {
				label += " > " + w.Heading
			}
		}
		switch {
		case file && w.Embed:
			return "![" + label + "](" + u + ")", true
		case !file && w.Heading != "" && !strings.HasPrefix(w.Heading, "^"):
			u += headingAnchor(w.Heading)
		}
		return "[" + label + "](" + u + ")", true
	})
}
