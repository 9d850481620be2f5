package transfer_test

import (
	"fmt"
	"strings"
	"testing"

	"quire/transfer"
)

// A zip inside the archive is bounded like the archive (nested.go): its
// entry count is read from its end record and its directory before
// archive/zip builds a File per record, and its entries that share bytes
// are refused by name.

func TestInnerZipOverTheEntryCapIsRefusedByName(t *testing.T) {
	for _, c := range overCapZips() {
		t.Run(c.what, func(t *testing.T) {
			s := newSpace(t)
			ann := s.user("ann@example.com", "Ann", "editor")
			archive := zipOf(t, [][2]string{
				{"Part-1.zip", string(c.zip)},
				{"kept.md", "# Kept"},
			})
			var rep *transfer.Report
			m := allocated(func() { rep = s.importZip(ann, archive, "") })
			if len(rep.Created) != 1 || rep.Created[0].Path != "kept.md" || len(rep.Refused) != 1 {
				t.Fatalf("created %+v, refused %+v, want kept.md created and the inner zip refused", rep.Created, rep.Refused)
			}
			if r := refusals(rep)["Part-1.zip"]; !strings.Contains(r, "it is a zip inside the archive, and it holds more files than the archive may (10000 in all)") {
				t.Errorf("Part-1.zip refused with %q", r)
			}
			// archive/zip alone would have built 200,000 Files first
			// (58 MiB allocated without the check; about 300 KiB with it).
			t.Logf("allocated %d KiB", m>>10)
			if m > 4<<20 {
				t.Errorf("refusing it allocated %d KiB, want under 4 MiB", m>>10)
			}
		})
	}
}

func TestInnerZipOverlappingEntriesAreRefusedByName(t *testing.T) {
	s := newSpace(t)
	ann := s.user("ann@example.com", "Ann", "editor")
	inner := rawZip([]byte("# Shared\n\nthe same bytes\n"), true, 20, func(i int) string { return fmt.Sprintf("d%03d.md", i) }, false, -1)
	rep := s.importZip(ann, zipOf(t, [][2]string{{"sub/Part-1.zip", string(inner)}}), "")
	if len(rep.Created) != 1 || rep.Created[0].Path != "sub/d000.md" || len(rep.Refused) != 19 {
		t.Fatalf("%d created %+v, %d refused, want sub/d000.md alone", len(rep.Created), rep.Created, len(rep.Refused))
	}
	if r := refusals(rep)["sub/d007.md"]; !strings.Contains(r, "its bytes are also those of d000.md (overlapping entries") {
		t.Errorf("sub/d007.md refused with %q", r)
	}
}
