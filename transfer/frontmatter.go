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
	var err error
	if fm.ID, err = str("id"); err != nil {
		return fm, err
	}
	if fm.Title, err = str("title"); err != nil {
		return fm, err
	}
	if fm.Summary, err = str("summary"); err != nil {
		return fm, err
	}
	if fm.Status, err = str("status"); err != nil {
		return fm, err
	}
	if fm.Visibility, err = str("visibility"); err != nil {
		return fm, err
	}
	if fm.ContentType, err = str("content_type"); err != nil {
		return fm, err
	}
	if fm.Owner, err = str("owner"); err != nil {
		return fm, err
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
