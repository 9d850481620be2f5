package transfer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"quire"
)

// timeLayout is how an export writes times: RFC 3339 in UTC with six
// fractional digits, as the API does.
const timeLayout = "2006-01-02T15:04:05.000000Z07:00"

// frontMatter is what an export writes above a document, and what an
// import honours (each field optional there).
type frontMatter struct {
	ID          string
	Title       string
	Summary     string
	Status      string
	Visibility  string
	ContentType string
	Tags        []string
	HasTags     bool
	CreatedAt   time.Time
	UpdatedAt   time.Time
	Owner       string
	// Other tools' keys (faithful.go): description, date, keywords, draft.
	Description string
	Date        time.Time
	Keywords    []string
	Draft       bool
	HasDraft    bool
}

// writeFrontMatter writes d's front matter. Strings are JSON strings,
// which YAML reads as double-quoted scalars.
func writeFrontMatter(b *bytes.Buffer, d *quire.Document) {
	q := func(s string) string {
		var out bytes.Buffer
		enc := json.NewEncoder(&out)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		return strings.TrimSuffix(out.String(), "\n")
	}
	b.WriteString("---\n")
	b.WriteString("id: " + q(d.ID) + "\n")
	b.WriteString("title: " + q(d.Title) + "\n")
	b.WriteString("summary: " + q(d.Summary) + "\n")
	b.WriteString("status: " + q(d.Status) + "\n")
	b.WriteString("visibility: " + q(d.Visibility) + "\n")
	if d.ContentType != "markdown" {
		b.WriteString("content_type: " + q(d.ContentType) + "\n")
	}
	b.WriteString("tags: [")
	for i, t := range d.Tags {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(q(t))
	}
	b.WriteString("]\n")
	b.WriteString("created_at: " + d.CreatedAt.UTC().Format(timeLayout) + "\n")
	b.WriteString("updated_at: " + d.UpdatedAt.UTC().Format(timeLayout) + "\n")
	b.WriteString("owner: " + q(d.OwnerName) + "\n")
	b.WriteString("---\n")
}

// splitFrontMatter returns a file's front matter (without its fences) and
// its body. A file without one has an empty front matter. A front matter
// opened and never closed is an error.
func splitFrontMatter(text string) (fm, body string, err error) {
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		rest, ok = strings.CutPrefix(text, "---\r\n")
	}
	if !ok {
		return "", text, nil
	}
	limit := min(len(rest), maxFrontMatter)
	for i := 0; i < limit; {
		nl := strings.IndexByte(rest[i:], '\n')
		line := rest[i:]
		if nl >= 0 {
			line = rest[i : i+nl]
		}
		if l := strings.TrimRight(line, "\r"); l == "---" || l == "..." {
			end := len(rest)
			if nl >= 0 {
				end = i + nl + 1
			}
			return rest[:i], rest[end:], nil
		}
		if nl < 0 {
			break
		}
		i += nl + 1
	}
	return "", "", errors.New("its front matter has no closing ---")
}

// parseFrontMatter reads the fields quire knows; others (an Obsidian
// vault's aliases, another wiki's layout) are ignored.
func parseFrontMatter(src string) (frontMatter, error) {
	var fm frontMatter
	if strings.TrimSpace(src) == "" {
		return fm, nil
	}
	if err := prescan(src); err != nil {
		return fm, err
	}
	var m map[string]any
	if err := yaml.Unmarshal([]byte(src), &m); err != nil {
		return fm, fmt.Errorf("its front matter is not YAML: %s", firstLine(err.Error()))
	}
	str := func(key string) (string, error) {
		v, ok := m[key]
		if !ok || v == nil {
			return "", nil
		}
		switch x := v.(type) {
		case string:
			return x, nil
		case int, int64, uint64, float64, bool:
			return fmt.Sprint(x), nil
		}
		return "", fmt.Errorf("its front matter's %s is not text", key)
	}
	for _, f := range []struct {
		key string
		dst *string
	}{
		{"id", &fm.ID}, {"title", &fm.Title}, {"summary", &fm.Summary}, {"status", &fm.Status},
		{"visibility", &fm.Visibility}, {"content_type", &fm.ContentType}, {"owner", &fm.Owner},
	} {
		v, err := str(f.key)
		if err != nil {
			return fm, err
		}
		*f.dst = v
	}
	switch tags := m["tags"].(type) {
	case nil:
	case string: // "a, b" or "a b", as some tools write them
		fm.HasTags = true
		fm.Tags = append(fm.Tags, strings.FieldsFunc(tags, func(r rune) bool { return r == ',' || r == ' ' })...)
	case []any:
		fm.HasTags = true
		for _, t := range tags {
			s, ok := t.(string)
			if !ok {
				return fm, errors.New("its front matter's tags are not all text")
			}
			fm.Tags = append(fm.Tags, s)
		}
	default:
		return fm, errors.New("its front matter's tags are not a list")
	}
	for key, dst := range map[string]*time.Time{"created_at": &fm.CreatedAt, "updated_at": &fm.UpdatedAt} {
		switch v := m[key].(type) {
		case nil:
		case time.Time:
			*dst = v
		case string:
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return fm, fmt.Errorf("its front matter's %s is not an RFC 3339 time", key)
			}
			*dst = t
		default:
			return fm, fmt.Errorf("its front matter's %s is not a time", key)
		}
	}
	moreFrontMatter(m, &fm)
	return fm, nil
}

// Limits of a front matter, checked by prescan before the YAML parser sees
// it: nesting costs the parser memory per level (30,000 "[" took 1.4 GB),
// and anchors, aliases and merge keys cost it time and memory that grow
// faster than the text (a chain of merge keys, aliases of aliases). Front
// matter written by any tool uses a few levels and none of the rest.
const (
	maxYAMLDepth   = 20
	maxYAMLAnchors = 16 // and as many aliases
	maxYAMLMerges  = 8
)

// prescan refuses a front matter that nests deeper than maxYAMLDepth, or
// holds more than maxYAMLAnchors anchors or aliases or maxYAMLMerges merge
// keys. One pass, no allocation: it reads YAML's tokens only as far as
// needed to count (quoted scalars and comments skipped, block indentation,
// "- " and flow brackets counted as levels). It may overcount (a "[" in a
// block scalar), never undercount.
func prescan(src string) error {
	var (
		indents  [maxYAMLDepth + 2]int // block levels open, by indentation
		levels   int
		flow     int  // open [ and {
		quote    byte // the quote of a scalar open across lines, or 0
		anchors  int
		aliases  int
		merges   int
		tooDeep  = errors.New("its front matter nests deeper than " + fmt.Sprint(maxYAMLDepth) + " levels")
		tooMany  = func(what string, n int) error { return fmt.Errorf("its front matter has more than %d %s", n, what) }
		maxDepth = maxYAMLDepth
	)
	for line := range strings.Lines(src) {
		line = strings.TrimRight(line, "\r\n")
		i := 0
		if quote == 0 && flow == 0 {
			for i < len(line) && line[i] == ' ' {
				i++
			}
			if i == len(line) || line[i] == '#' {
				continue // blank, or a comment
			}
			for levels > 0 && indents[levels-1] >= i {
				levels--
			}
			if levels > maxDepth {
				return tooDeep
			}
			indents[levels] = i
			levels++
		}
		depth := levels + flow
		start := true // at the start of a token
		for ; i < len(line); i++ {
			c := line[i]
			if quote != 0 {
				switch {
				case quote == '"' && c == '\\':
					i++
				case c == quote && quote == '\'' && i+1 < len(line) && line[i+1] == '\'':
					i++
				case c == quote:
					quote = 0
				}
				continue
			}
			wasStart := start
			start = c == ' ' || c == '\t' || c == ',' || c == '[' || c == '{' || c == ':'
			switch {
			case c == '#' && wasStart:
				i = len(line)
			case (c == '"' || c == '\'') && wasStart:
				quote = c
			case c == '[' || c == '{':
				flow++
				depth++
			case c == ']' || c == '}':
				flow = max(flow-1, 0)
			case (c == '-' || c == '?') && wasStart && (i+1 == len(line) || line[i+1] == ' '):
				depth++ // "- - x": a sequence in a sequence on one line
				start = true
			case c == '&' && wasStart && i+1 < len(line) && line[i+1] != ' ':
				if anchors++; anchors > maxYAMLAnchors {
					return tooMany("anchors (&)", maxYAMLAnchors)
				}
			case c == '*' && wasStart && i+1 < len(line) && line[i+1] != ' ':
				if aliases++; aliases > maxYAMLAnchors {
					return tooMany("aliases (*)", maxYAMLAnchors)
				}
			case c == '<' && wasStart && strings.HasPrefix(line[i:], "<<"):
				if merges++; merges > maxYAMLMerges {
					return tooMany("merge keys (<<)", maxYAMLMerges)
				}
				i++
			}
			if depth > maxDepth {
				return tooDeep
			}
		}
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return truncate(s, 200)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
