package transfer

import (
	"archive/zip"
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"strconv"

	"quire"
)

// An archive is measured before archive/zip reads it: archive/zip builds a
// File for every record of the central directory (it reads records until
// one is malformed, whatever count the end record declares), so a small
// zip whose records all point at one local header costs gigabytes before
// any limit of ours applies. countEntries walks the records as
// archive/zip will, without keeping any, and stops past MaxFiles.

// Signatures and fixed lengths of the zip format (APPNOTE.TXT 4.3).
const (
	sigDirectoryEnd   = 0x06054b50
	sigDirectory64Loc = 0x07064b50
	sigDirectory64End = 0x06064b50
	sigDirectory      = 0x02014b50
	lenDirectoryEnd   = 22
	lenDirectory64Loc = 20
	lenDirectory64End = 56
	lenDirectory      = 46
)

// errArchive is an archive whose end records archive/zip would not read
// either: not a zip.
var errArchive = errors.New("not a zip archive")

// directoryEnd is what the end of central directory record (zip64's when
// there is one) declares.
type directoryEnd struct {
	records uint64 // entries declared
	size    uint64 // bytes of the central directory
	offset  uint64 // where it starts, relative to baseOffset
	at      int64  // where the end record is
}

// readDirectoryEnd reads the end record of r as archive/zip does: its
// signature searched in the last 1 KiB then the last 65 KiB, and the zip64
// end record when the plain one says there is one.
func readDirectoryEnd(r io.ReaderAt, size int64) (*directoryEnd, error) {
	var buf []byte
	var at int64 = -1
	for _, n := range []int64{1024, 65 * 1024} {
		n = min(n, size)
		buf = make([]byte, n)
		if _, err := r.ReadAt(buf, size-n); err != nil && err != io.EOF {
			return nil, err
		}
		if p := findDirectoryEnd(buf); p >= 0 {
			buf, at = buf[p:], size-n+int64(p)
			break
		}
		if n == size {
			break
		}
	}
	if at < 0 {
		return nil, errArchive
	}
	le := binary.LittleEndian
	d := &directoryEnd{
		records: uint64(le.Uint16(buf[10:])),
		size:    uint64(le.Uint32(buf[12:])),
		offset:  uint64(le.Uint32(buf[16:])),
		at:      at,
	}
	if d.records != 0xffff && d.size != 0xffff && d.offset != 0xffffffff {
		return d, nil
	}
	// zip64: the locator just before the end record names the zip64 end
	// record, which holds the counts in 64 bits.
	loc := at - lenDirectory64Loc
	if loc < 0 {
		return d, nil
	}
	b := make([]byte, lenDirectory64Loc)
	if _, err := r.ReadAt(b, loc); err != nil {
		return nil, err
	}
	if le.Uint32(b) != sigDirectory64Loc || le.Uint32(b[4:]) != 0 || le.Uint32(b[16:]) != 1 {
		return d, nil
	}
	p := int64(le.Uint64(b[8:]))
	if p < 0 || p > size-lenDirectory64End {
		return nil, errArchive
	}
	b = make([]byte, lenDirectory64End)
	if _, err := r.ReadAt(b, p); err != nil {
		return nil, err
	}
	if le.Uint32(b) != sigDirectory64End {
		return nil, errArchive
	}
	d.records, d.size, d.offset, d.at = le.Uint64(b[32:]), le.Uint64(b[40:]), le.Uint64(b[48:]), p
	return d, nil
}

// findDirectoryEnd returns the offset in b of the last end record whose
// comment fits in b, or -1.
func findDirectoryEnd(b []byte) int {
	for i := len(b) - lenDirectoryEnd; i >= 0; i-- {
		if binary.LittleEndian.Uint32(b[i:]) == sigDirectoryEnd {
			n := int(binary.LittleEndian.Uint16(b[i+lenDirectoryEnd-2:]))
			if n+lenDirectoryEnd+i > len(b) {
				return -1
			}
			return i
		}
	}
	return -1
}

// countEntries returns how many records archive/zip would read from the
// central directory of r, counting at most limit+1: more than limit means
// more than limit. Both places archive/zip may start from are walked (the
// declared offset, and that offset shifted by data prepended to the zip)
// and the larger count is returned. Nothing is kept: the walk reads the
// directory once per start, through a small buffer.
func countEntries(r io.ReaderAt, size int64, limit int) (declared uint64, n int, err error) {
	d, err := readDirectoryEnd(r, size)
	if err != nil {
		return 0, 0, err
	}
	if d.size > 1<<62 || d.offset > 1<<62 {
		return 0, 0, errArchive
	}
	starts := []int64{int64(d.offset)}
	if base := d.at - int64(d.size) - int64(d.offset); base != 0 {
		starts = append(starts, base+int64(d.offset))
	}
	for _, start := range starts {
		if start < 0 || start >= size {
			continue
		}
		n = max(n, walkDirectory(io.NewSectionReader(r, start, size-start), limit))
	}
	return d.records, n, nil
}

// walkDirectory counts the central directory records at the start of r,
// up to limit+1, stopping at the first that is not one.
func walkDirectory(r io.Reader, limit int) int {
	br := bufio.NewReaderSize(r, 64<<10)
	var h [lenDirectory]byte
	n := 0
	for n <= limit {
		if _, err := io.ReadFull(br, h[:]); err != nil {
			return n
		}
		le := binary.LittleEndian
		if le.Uint32(h[:]) != sigDirectory {
			return n
		}
		skip := int(le.Uint16(h[28:])) + int(le.Uint16(h[30:])) + int(le.Uint16(h[32:]))
		if k, err := br.Discard(skip); k < skip || err != nil {
			return n
		}
		n++
	}
	return n
}

// checkArchive refuses, before archive/zip builds anything, an archive of
// more than MaxFiles entries (declared, or as records) as a whole: one
// error, not a refusal per entry.
func checkArchive(r io.ReaderAt, size int64) error {
	declared, n, err := countEntries(r, size, MaxFiles)
	if err != nil {
		return ErrNotZip
	}
	if declared > MaxFiles || n > MaxFiles {
		count := strconv.FormatUint(max(declared, uint64(n)), 10)
		if n > MaxFiles && uint64(n) > declared {
			count = "more than " + strconv.Itoa(MaxFiles)
		}
		return quire.Invalid(map[string]string{"file": "holds " + count + " entries; an archive may hold at most " +
			strconv.Itoa(MaxFiles) + ": nothing was imported"})
	}
	return nil
}

// minBudget is what any archive may unpack to, whatever its size: a few
// Markdown files of the largest size, which text of repeated lines
// compresses far more than MaxRatio to 1.
const minBudget = 4 * MaxFile

// expansionBudget is how many bytes an archive of size bytes may unpack
// to in all: MaxRatio times its size, at least minBudget. MaxTotal applies
// besides.
func expansionBudget(size int64) int64 {
	return max(size*MaxRatio, minBudget)
}

// checkExpansion refuses an archive whose entries declare, in all, more
// than its budget: a zip bomb, be its entries large or small. What they
// unpack to as read is held to the same budget (importer.budget).
// Entries refused already (overlapping ones) do not count.
func checkExpansion(files []*zip.File, refused []string, size int64) error {
	var total uint64
	for i, f := range files {
		if refused[i] == "" {
			total += min(f.UncompressedSize64, 1<<40) // no overflow: at most MaxFiles entries
		}
	}
	if total > uint64(expansionBudget(size)) {
		return quire.Invalid(map[string]string{"file": "declares " + strconv.FormatUint(total>>20, 10) +
			" MiB unpacked, more than " + strconv.Itoa(MaxRatio) + " times its size (a zip bomb): nothing was imported"})
	}
	return nil
}

// overlapping returns, for each entry whose bytes (from its local header
// to the end of its data) are also another entry's, why it is refused; ""
// for the others. Records of the central directory pointing into the same
// bytes are no archive any tool writes: they multiply what a small zip
// unpacks to. Reading where each entry's data starts reads its local
// header: one small read per entry, at most MaxFiles.
func overlapping(files []*zip.File) []string {
	type span struct {
		start, end int64
		i          int
	}
	reasons := make([]string, len(files))
	spans := make([]span, 0, len(files))
	for i, f := range files {
		data, err := f.DataOffset()
		if err != nil {
			reasons[i] = "it could not be read: " + firstLine(err.Error())
			continue
		}
		spans = append(spans, span{start: data, end: data + int64(min(f.CompressedSize64, 1<<62)), i: i})
	}
	slices.SortFunc(spans, func(a, b span) int {
		if a.start != b.start {
			if a.start < b.start {
				return -1
			}
			return 1
		}
		return a.i - b.i
	})
	// Sorted by start: an entry overlaps an earlier one when it starts
	// before the farthest end so far, or where the previous one starts
	// (the same local header, an empty file's included).
	var reach, last int64 = -1, -1
	reachOf, lastOf := -1, -1
	for _, s := range spans {
		other := -1
		switch {
		case s.start == last:
			other = lastOf
		case s.start < reach:
			other = reachOf
		}
		if other >= 0 {
			reasons[s.i] = "its bytes are also those of " + truncate(files[other].Name, 200) + " (overlapping entries: a zip bomb)"
			continue
		}
		last, lastOf = s.start, s.i
		if s.end > reach {
			reach, reachOf = s.end, s.i
		}
	}
	return reasons
}
