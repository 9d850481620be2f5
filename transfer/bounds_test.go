package transfer_test

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"quire"
	"quire/transfer"
)

// Each step of an import is bounded before it allocates (issue 26): these
// tests send the attacks of the issue and check the answer and what the
// import allocated (runtime.MemStats.TotalAlloc: every byte allocated,
// freed or not, so a spike between two GCs counts).

// allocated returns the bytes allocated while fn ran.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func refusals(rep *transfer.Report) map[string]string {
	out := map[string]string{}
	for _, r := range rep.Refused {
		out[r.Path] = r.Reason
	}
	return out
}

func TestFrontMatterIsPrescannedAndRefusedByName(t *testing.T) {
	s := newSpace(t)
	ann := s.user("ann@example.com", "Ann", "editor")
	var merges strings.Builder
	merges.WriteString("---\nb0: &b0 {x: 1}\n")
	for i := 1; i < 1700; i++ {
		fmt.Fprintf(&merges, "b%d: &b%d {<<: *b%d, y%d: 1}\n", i, i, i-1, i)
	}
	merges.WriteString("---\nbody")
	var aliases strings.Builder
	aliases.WriteString("---\na: &a [x, x]\n")
	for i := range 40 {
		fmt.Fprintf(&aliases, "a%d: [*a, *a]\n", i)
	}
	aliases.WriteString("---\nbody")
	archive := zipOf(t, [][2]string{
		{"nested.md", "---\ntitle: " + strings.Repeat("[", 30000) + "\n---\nbody"},
		{"braces.md", "---\ntitle: " + strings.Repeat("{a: ", 5000) + "\n---\nbody"},
		{"dashes.md", "---\ntags:\n" + strings.Repeat("- ", 20000) + "x\n---\nbody"},
		{"indent.md", "---\n" + indented(40) + "---\nbody"},
		{"merges.md", merges.String()},
		{"aliases.md", aliases.String()},
		{"fine.md", "---\ntitle: \"Fine [1]\"\nsummary: Tom & Jerry, *not* an alias\ntags: [a, b]\nextra:\n  nested:\n    list:\n      - - x\n---\nbody"},
	})
	var rep *transfer.Report
	n := allocated(func() { rep = s.importZip(ann, archive, "") })
	if len(rep.Created) != 1 || rep.Created[0].Path != "fine.md" {
		t.Errorf("created %+v, want fine.md alone (refused %+v)", rep.Created, rep.Refused)
	}
	refused := refusals(rep)
	for name, reason := range map[string]string{
		"nested.md":  "nests deeper than 20 levels",
		"braces.md":  "nests deeper than 20 levels",
		"dashes.md":  "nests deeper than 20 levels",
		"indent.md":  "nests deeper than 20 levels",
		"merges.md":  "more than 8 merge keys (<<)",
		"aliases.md": "more than 16 aliases (*)",
	} {
		if got := refused[name]; !strings.Contains(got, reason) {
			t.Errorf("%s: refused with %q, want %q", name, got, reason)
		}
	}
	// At b954972 the 30,000 "[" alone allocated over a gigabyte.
	if n > 64<<20 {
		t.Errorf("the import allocated %d MiB, want under 64", n>>20)
	}
}

// indented is a block mapping n levels deep.
func indented(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat(" ", i) + "k:\n")
	}
	b.WriteString(strings.Repeat(" ", n) + "v: 1\n")
	return b.String()
}

// rawZip writes an archive by hand: one local header at offset 0 holding
// data (deflated when deflate), and n central directory records naming
// it, under names name(i). zip64 writes the counts in a zip64 end record;
// declared is the count the end records declare (n when < 0).
func rawZip(data []byte, deflate bool, n int, name func(int) string, zip64 bool, declared int) []byte {
	le := binary.LittleEndian
	stored := data
	method := uint16(0)
	if deflate {
		var c bytes.Buffer
		w, _ := flate.NewWriter(&c, flate.BestCompression)
		w.Write(data)
		w.Close()
		stored, method = c.Bytes(), 8
	}
	crc := crc32.ChecksumIEEE(data)
	var b bytes.Buffer
	put := func(v ...any) {
		for _, x := range v {
			binary.Write(&b, le, x)
		}
	}
	first := name(0)
	put(uint32(0x04034b50), uint16(20), uint16(0), method, uint16(0), uint16(0x21), crc,
		uint32(len(stored)), uint32(len(data)), uint16(len(first)), uint16(0))
	b.WriteString(first)
	b.Write(stored)
	cdStart := b.Len()
	// The records differ only by their names: each is the record of the
	// names of its length (encoded once), then the name.
	var rec []byte
	recName := -1
	for i := range n {
		nm := name(i)
		if len(nm) != recName {
			var r bytes.Buffer
			for _, x := range []any{uint32(0x02014b50), uint16(20), uint16(20), uint16(0), method, uint16(0), uint16(0x21), crc,
				uint32(len(stored)), uint32(len(data)), uint16(len(nm)), uint16(0), uint16(0), uint16(0), uint16(0), uint32(0o644 << 16), uint32(0)} {
				binary.Write(&r, le, x)
			}
			rec, recName = r.Bytes(), len(nm)
			b.Grow((n - i) * (len(rec) + len(nm)))
		}
		b.Write(rec)
		b.WriteString(nm)
	}
	cdEnd := b.Len()
	if declared < 0 {
		declared = n
	}
	if zip64 {
		end64 := b.Len()
		put(uint32(0x06064b50), uint64(44), uint16(45), uint16(45), uint32(0), uint32(0),
			uint64(declared), uint64(declared), uint64(cdEnd-cdStart), uint64(cdStart))
		put(uint32(0x07064b50), uint32(0), uint64(end64), uint32(1))
		put(uint32(0x06054b50), uint16(0), uint16(0), uint16(0xffff), uint16(0xffff), uint32(0xffffffff), uint32(0xffffffff), uint16(0))
	} else {
		put(uint32(0x06054b50), uint16(0), uint16(0), uint16(declared), uint16(declared), uint32(cdEnd-cdStart), uint32(cdStart), uint16(0))
	}
	return b.Bytes()
}

// overCapZip is a zip of 200,000 entries (10 MB of records pointing at
// one local header) and how it states their number.
type overCapZip struct {
	what string
	zip  []byte
}

// overCapZips are the two ways a zip over the entry cap says how many
// entries it has: in a zip64 end record, or only by its directory, the
// 16-bit count of its end record lying.
// They are built once for the test binary (about a second under -race) and
// only read.
var overCapZips = sync.OnceValue(func() []overCapZip {
	const n = 200_000
	name := func(i int) string { return strconv.Itoa(1_000_000 + i)[1:] + ".md" } // %06d.md
	return []overCapZip{
		{"declared in the end record, zip64", rawZip([]byte("# A\n"), false, n, name, true, -1)},
		{"counted in the directory, the end record lying", rawZip([]byte("# A\n"), false, n, name, false, n%65536)},
	}
})

func TestArchiveOverTheEntryCapIsRefusedWhole(t *testing.T) {
	s := newSpace(t)
	ann := s.user("ann@example.com", "Ann", "editor")
	for _, c := range overCapZips() {
		t.Run(c.what, func(t *testing.T) {
			archive := c.zip
			var (
				rep *transfer.Report
				err error
			)
			m := allocated(func() {
				rep, err = s.xfer.ImportZip(context.Background(), ann, bytes.NewReader(archive), int64(len(archive)), transfer.Options{})
			})
			if quire.ErrorCode(err) != quire.EVALIDATION || !strings.Contains(err.Error(), "an archive may hold at most 10000") {
				refused := 0
				if rep != nil {
					refused = len(rep.Refused)
				}
				t.Fatalf("import: %v (%d refusals), want one refusal of the archive", err, refused)
			}
			// archive/zip alone would have built 200,000 Files first.
			if m > 4<<20 {
				t.Errorf("refusing it allocated %d KiB, want under 4 MiB", m>>10)
			}
		})
	}
	t.Run("at the cap, imported", func(t *testing.T) {
		archive := zipOf(t, [][2]string{{"a.md", "# A"}, {"b.md", "# B"}})
		if rep := s.importZip(ann, archive, ""); len(rep.Created) != 2 {
			t.Errorf("report %+v", rep)
		}
	})
}

func TestOverlappingEntriesAndExpansionAreRefused(t *testing.T) {
	s := newSpace(t)
	ann := s.user("ann@example.com", "Ann", "editor")
	mib := bytes.Repeat([]byte("a line of text\n"), (1<<20)/15) // just under 1 MiB
	t.Run("entries sharing one local header, by name", func(t *testing.T) {
		archive := rawZip(mib, true, 100, func(i int) string { return fmt.Sprintf("d%03d.md", i) }, false, -1)
		rep := s.importZip(ann, archive, "")
		if len(rep.Created) != 1 || rep.Created[0].Path != "d000.md" || len(rep.Refused) != 99 {
			t.Fatalf("%d created, %d refused, want d000.md alone", len(rep.Created), len(rep.Refused))
		}
		if r := refusals(rep)["d042.md"]; !strings.Contains(r, "its bytes are also those of d000.md (overlapping entries") {
			t.Errorf("d042.md refused with %q", r)
		}
	})
	t.Run("small entries unpacking past the archive's ratio", func(t *testing.T) {
		var entries [][2]string
		for i := range 20 {
			entries = append(entries, [2]string{fmt.Sprintf("e%02d.md", i), string(mib)})
		}
		archive := zipOf(t, entries)
		rep, err := s.xfer.ImportZip(context.Background(), ann, bytes.NewReader(archive), int64(len(archive)), transfer.Options{})
		if quire.ErrorCode(err) != quire.EVALIDATION || !strings.Contains(err.Error(), "more than 100 times its size") {
			t.Fatalf("import of %d bytes unpacking to 20 MiB: %v, %+v", len(archive), err, rep)
		}
	})
}

func TestADuplicatedPathIsSpooledOnce(t *testing.T) {
	s := newSpace(t)
	ann := s.user("ann@example.com", "Ann", "editor")
	pic := append([]byte("GIF89a"), bytes.Repeat([]byte{7}, 64<<10)...)
	entries := [][2]string{{"a.md", "# A\n![pic](pic.gif)"}}
	for range 50 {
		entries = append(entries, [2]string{"pic.gif", string(pic)})
	}
	dir, err := transfer.SpoolDir()
	if err != nil {
		t.Fatal(err)
	}
	rep := s.importZip(ann, zipOf(t, entries), "")
	if len(rep.Created) != 2 || len(rep.Refused) != 49 || !strings.Contains(rep.Refused[0].Reason, "another entry of the archive has the same path") {
		t.Fatalf("%d created, %d refused (%+v), want a.md and one pic.gif", len(rep.Created), len(rep.Refused), rep.Refused)
	}
	left, err := os.ReadDir(dir)
	if err != nil || len(left) != 0 {
		t.Errorf("the spool folder %s holds %v after the import (%v)", dir, left, err)
	}
}
