package attachments

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"

	"quire"
)

// sniffLen is how much of a file's start is kept for sniffing: the 512
// bytes http.DetectContentType reads, and more for an SVG whose <svg> tag
// comes after a long prolog.
const sniffLen = 4096

// Sniff returns the content type of a file from its first bytes:
// http.DetectContentType (the WHATWG algorithm: PNG, JPEG, GIF, WebP, PDF,
// HTML, text, ...), and image/svg+xml for XML or text whose first element
// is <svg>.
func Sniff(head []byte) string {
	ct := http.DetectContentType(head)
	if strings.HasPrefix(ct, "text/") && isSVG(head) {
		return "image/svg+xml"
	}
	return ct
}

// isSVG reports whether the first element of head, after a byte order
// mark, white space, an XML declaration, processing instructions, comments
// and a doctype, is <svg.
func isSVG(head []byte) bool {
	b := bytes.TrimPrefix(head, []byte("\xEF\xBB\xBF"))
	for {
		b = bytes.TrimLeft(b, " \t\r\n")
		var end []byte
		switch {
		case bytes.HasPrefix(b, []byte("<?")):
			end = []byte("?>")
		case bytes.HasPrefix(b, []byte("<!--")):
			end = []byte("-->")
		case len(b) >= 9 && bytes.EqualFold(b[:9], []byte("<!DOCTYPE")):
			end = []byte(">")
		default:
			if len(b) < 5 || !bytes.EqualFold(b[:4], []byte("<svg")) {
				return false
			}
			c := b[4]
			return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '>' || c == '/'
		}
		i := bytes.Index(b, end)
		if i < 0 {
			return false
		}
		b = b[i+len(end):]
	}
}

// inlineTypes are the types shown in the page rather than downloaded:
// images a browser renders without running anything. SVG, which can carry
// script, is not one of them.
var inlineTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// Inline reports whether at is served inline (an image) rather than as a
// download.
func Inline(at *quire.Attachment) bool { return inlineTypes[at.ContentType] }

// Disposition is the Content-Disposition of at: inline for images,
// attachment for everything else, with its name as an ASCII fallback
// (anything else, quotes and backslashes made "_") and in full as
// filename* (RFC 6266, RFC 8187).
func Disposition(at *quire.Attachment) string {
	kind := "attachment"
	if Inline(at) {
		kind = "inline"
	}
	ascii := strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' || r == '%' {
			return '_'
		}
		return r
	}, at.Name)
	v := kind + `; filename="` + ascii + `"`
	if ascii != at.Name {
		v += `; filename*=UTF-8''` + extValue(at.Name)
	}
	return v
}

// extValue percent-encodes every byte of s but RFC 8187's attr-char.
func extValue(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$&+-.^_`|~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// PrepareDownload readies r and w for http.ServeContent of at: at most a
// few ranges, merged, are served as ranges, more the whole file (each
// range costs a query of a chunk or more: LimitRanges), and every download
// carries its ETag, type and disposition, and runs sandboxed, unsniffed:
// a file opened in the browser runs nothing and reaches nothing of the
// site. The API's download and the files of share pages both use it.
func PrepareDownload(w http.ResponseWriter, r *http.Request, at *quire.Attachment) {
	if rh := r.Header.Get("Range"); rh != "" {
		if lim := LimitRanges(rh, at.Size); lim != "" {
			r.Header.Set("Range", lim)
		} else {
			r.Header.Del("Range")
		}
	}
	h := w.Header()
	h.Set("ETag", `"`+at.SHA256+`"`)
	h.Set("Content-Type", ContentType(at))
	h.Set("Content-Disposition", Disposition(at))
	h.Set("Content-Security-Policy", "sandbox")
	h.Set("X-Content-Type-Options", "nosniff")
}

// ContentType is the Content-Type a download is sent with: the sniffed
// type, with a parameter list browsers read alike.
func ContentType(at *quire.Attachment) string {
	mt, params, err := mime.ParseMediaType(at.ContentType)
	if err != nil {
		return "application/octet-stream"
	}
	return mime.FormatMediaType(mt, params)
}

// chunkReader reads a file one chunk per query, keeping the chunk it read
// last: the io.ReadSeeker http.ServeContent serves ranges from.
type chunkReader struct {
	ctx   context.Context
	store quire.AttachmentStore
	vis   quire.Visibility
	id    string
	size  int64
	off   int64
	n     int // the chunk in buf; -1 for none
	buf   []byte
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	n := int(r.off / quire.AttachmentChunkSize)
	if n != r.n {
		buf, err := r.store.AttachmentChunk(r.ctx, r.vis, r.id, n, r.buf)
		if err != nil {
			r.n = -1
			return 0, err
		}
		r.buf, r.n = buf, n
	}
	k := copy(p, r.buf[min(int(r.off-int64(n)*quire.AttachmentChunkSize), len(r.buf)):])
	if k == 0 && len(p) > 0 {
		return 0, io.ErrUnexpectedEOF
	}
	r.off += int64(k)
	return k, nil
}

var errSeek = errors.New("attachment: seek before the start")

func (r *chunkReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.size
	}
	if offset < 0 {
		return r.off, errSeek
	}
	r.off = offset
	return offset, nil
}

// MaxRanges is the most ranges a download answers as such, after merging;
// beyond, it answers the whole file. Each range costs at least one chunk
// query, and no client needs more to resume or to seek in a file.
const MaxRanges = 8

// LimitRanges returns the Range header a download of size bytes is served
// for, given the client's h: its ranges merged where they overlap or
// touch, in ascending order (RFC 9110 section 14.2 lets a server coalesce
// them), or "" (the whole file) when more than MaxRanges remain. A header
// of another unit, or not well formed, is "" too: RFC 9110 section 14.2
// has a server ignore what it does not understand (http.ServeContent
// would answer 416 without a Content-Range). A header whose ranges all
// start past the end is returned as it is, for http.ServeContent's 416
// with "Content-Range: bytes */size". The work is linear in len(h) but
// for the sort of the ranges.
func LimitRanges(h string, size int64) string {
	const unit = "bytes="
	if !strings.HasPrefix(h, unit) {
		return ""
	}
	type span struct{ start, end int64 } // [start, end)
	var spans []span
	past := false // a range with no byte of the file
	for ra := range strings.SplitSeq(h[len(unit):], ",") {
		ra = textproto.TrimString(ra)
		if ra == "" {
			continue
		}
		first, last, ok := strings.Cut(ra, "-")
		if !ok {
			return ""
		}
		first, last = textproto.TrimString(first), textproto.TrimString(last)
		var sp span
		if first == "" {
			if last == "" || last[0] == '-' {
				return ""
			}
			n, err := strconv.ParseInt(last, 10, 64)
			if err != nil || n < 0 {
				return ""
			}
			sp = span{size - min(n, size), size}
		} else {
			i, err := strconv.ParseInt(first, 10, 64)
			if err != nil || i < 0 {
				return ""
			}
			sp = span{i, size}
			if last != "" {
				j, err := strconv.ParseInt(last, 10, 64)
				if err != nil || j < i {
					return ""
				}
				sp.end = min(j, size-1) + 1 // j+1 would overflow at the largest j
			}
		}
		if sp.start < sp.end {
			spans = append(spans, sp)
		} else {
			past = true
		}
	}
	if len(spans) == 0 {
		if past {
			return unit + strconv.FormatInt(size, 10) + "-"
		}
		return ""
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	merged := spans[:1]
	for _, sp := range spans[1:] {
		if cur := &merged[len(merged)-1]; sp.start <= cur.end {
			cur.end = max(cur.end, sp.end)
			continue
		}
		merged = append(merged, sp)
	}
	if len(merged) > MaxRanges {
		return ""
	}
	var b strings.Builder
	b.WriteString(unit)
	for i, sp := range merged {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(sp.start, 10))
		b.WriteByte('-')
		b.WriteString(strconv.FormatInt(sp.end-1, 10))
	}
	return b.String()
}
