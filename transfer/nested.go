package transfer

import (
	"archive/zip"
	"errors"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
)

// A zip that holds zips: Notion exports a large workspace as a zip of
// Part-1.zip, Part-2.zip... The zips at the top of an archive's entries
// (one level: a zip inside those is a file like any other) are opened in
// its place, their entries under the directory that held them, each inner
// zip bounded like an upload (MaxArchive, the bomb ratio to its compressed
// size) and its entries counted with the others (MaxFiles, MaxTotal).

// isZip reports whether an entry is a zip to open in place.
func isZip(e *entry) bool {
	return !e.dir && !e.symlink && strings.EqualFold(path.Ext(e.name), ".zip")
}

// expandZips returns entries with each zip among them replaced by its
// entries, spooled to temporary files that close removes. An inner zip
// that cannot be opened is kept as an entry refused with the reason.
func expandZips(entries []entry) (out []entry, close func()) {
	var spools []*os.File
	close = func() {
		for _, f := range spools {
			f.Close()
			os.Remove(f.Name())
		}
	}
	if !anyZip(entries) {
		return entries, close
	}
	out = make([]entry, 0, len(entries))
	var spooled int64
	for i := range entries {
		e := entries[i]
		if !isZip(&e) || len(out) >= MaxFiles {
			out = append(out, e)
			continue
		}
		refuse := func(reason string) {
			e.refused = "it is a zip inside the archive, and " + reason
			out = append(out, e)
		}
		if _, reason := checkName(&e); reason != "" {
			out = append(out, e) // refused by name like any entry
			continue
		}
		dir, err := SpoolDir()
		if err != nil {
			refuse("it could not be spooled: " + firstLine(err.Error()))
			continue
		}
		f, err := os.CreateTemp(dir, "inner-*.zip")
		if err != nil {
			refuse("it could not be spooled: " + firstLine(err.Error()))
			continue
		}
		spools = append(spools, f)
		n, reason := spoolInner(f, &e, MaxTotal-spooled)
		spooled += n
		if reason != "" {
			refuse(reason)
			continue
		}
		// Measured like the archive before archive/zip reads it: its
		// entry count from its end record, and entries sharing bytes.
		if err := checkArchive(f, n); err != nil {
			if errors.Is(err, ErrNotZip) {
				refuse("it is not a zip archive")
			} else {
				refuse("it holds more files than the archive may (" + strconv.Itoa(MaxFiles) + " in all)")
			}
			continue
		}
		zr, err := zip.NewReader(f, n)
		if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
			refuse("it is not a zip archive")
			continue
		}
		if len(zr.File) > MaxFiles-len(out) {
			refuse("it holds more files than the archive may (" + strconv.Itoa(MaxFiles) + " in all)")
			continue
		}
		overlaps := overlapping(zr.File)
		dir = path.Dir(e.name)
		for j, inner := range zr.File {
			name := inner.Name
			if dir != "." {
				name = dir + "/" + name
			}
			out = append(out, zipEntry(inner, name, overlaps[j]))
		}
	}
	return out, close
}

// spoolInner copies the inner zip e to f, at most MaxArchive bytes and
// budget in all, checking its ratio to its compressed size; it returns the
// size copied or why it is refused.
func spoolInner(f *os.File, e *entry, budget int64) (int64, string) {
	rc, err := e.open()
	if err != nil {
		return 0, "it could not be read: " + firstLine(err.Error())
	}
	defer rc.Close()
	limit := min(int64(MaxArchive), budget)
	var n int64
	buf := make([]byte, 32<<10)
	for {
		k, err := rc.Read(buf)
		n += int64(k)
		switch {
		case n > limit:
			return n, "it is larger than " + strconv.Itoa(MaxArchive>>20) + " MiB, or the archive's zips unpack to more than " +
				strconv.Itoa(MaxTotal>>20) + " MiB"
		case e.compressed > 0 && n > minRatioCheck && uint64(n) > e.compressed*MaxRatio:
			return n, "it unpacks to more than " + strconv.Itoa(MaxRatio) + " times its compressed size (a zip bomb)"
		}
		if _, werr := f.Write(buf[:k]); werr != nil {
			return n, "it could not be spooled: " + firstLine(werr.Error())
		}
		if errors.Is(err, io.EOF) {
			return n, ""
		}
		if err != nil {
			return n, "it could not be read: " + firstLine(err.Error())
		}
	}
}

func anyZip(entries []entry) bool {
	for i := range entries {
		if isZip(&entries[i]) {
			return true
		}
	}
	return false
}
