package attachments

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCleanName(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes
	for _, c := range []struct{ in, want string }{
		{"report.pdf", "report.pdf"},
		{`C:\Users\ada\shot.png`, "shot.png"},
		{"../../etc/passwd", "passwd"},
		{"  spaced name.txt  ", "spaced name.txt"},
		{"evil\u202Egnp.exe", "evilgnp.exe"},
		{"line\r\nbreak\x00.txt", "linebreak.txt"},
		{"bad\xffutf8", "bad\uFFFDutf8"},
		{"", "file"},
		{"..", "file"},
		{"dir/", "file"},
		{long, strings.Repeat("é", 127)},
	} {
		got := CleanName(c.in)
		if got != c.want {
			t.Errorf("CleanName(%q) = %q, want %q", c.in, got, c.want)
		}
		if len(got) > MaxNameBytes || !utf8.ValidString(got) {
			t.Errorf("CleanName(%q) = %q: %d bytes, valid UTF-8 %t", c.in, got, len(got), utf8.ValidString(got))
		}
	}
}

func TestSniff(t *testing.T) {
	for _, c := range []struct{ head, want string }{
		{"\xEF\xBB\xBF<svg>", "image/svg+xml"},
		{"<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"x\">\n<svg width=\"1\"/>", "image/svg+xml"},
		{"<svgx>", "text/plain; charset=utf-8"},
		{"<?xml version=\"1.0\"?><html/>", "text/xml; charset=utf-8"},
		{"<!-- unterminated comment <svg>", "text/html; charset=utf-8"},
		{"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"},
	} {
		if got := Sniff([]byte(c.head)); got != c.want {
			t.Errorf("Sniff(%q) = %q, want %q", c.head, got, c.want)
		}
	}
}

// TestLimitRangesUpToTheEnd: a last position past the end, the largest one
// included, is the end of the file (RFC 9110 section 14.1.2), not a range
// past it.
func TestLimitRangesUpToTheEnd(t *testing.T) {
	for _, c := range []struct{ h, want string }{
		{"bytes=0-9223372036854775807", "bytes=0-999"},
		{"bytes=10-9223372036854775806", "bytes=10-999"},
		{"bytes=0-999", "bytes=0-999"},
		{"bytes=0-1500", "bytes=0-999"},
		{"bytes=0-9", "bytes=0-9"},
	} {
		if got := LimitRanges(c.h, 1000); got != c.want {
			t.Errorf("LimitRanges(%q, 1000) = %q, want %q", c.h, got, c.want)
		}
	}
}
