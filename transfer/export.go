package transfer

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"path"
	"strings"

	"quire"
)

// Export writes to w a zip of every document the actor can see, or of
// those in folderID and its subfolders when it is set (the folder is then
// the zip's top directory): one Markdown file per document with its front
// matter, at <folder path>/<title>.md (" (2)" and on when two share a name),
// every folder as a directory, and the links between exported documents
// rewritten to relative paths. Documents are read a page at a time, twice:
// once to name every file (the links need the names), once to write them.
// An unknown folderID is ENOTFOUND, before anything is written.
//
// An export that gets to writing records one document.exported event with
// how many documents it wrote (docs.RecordExport), also when it is cut
// midway: never which documents nor what they say.
func (s *Service) Export(ctx context.Context, a quire.Actor, folderID string, w io.Writer) (err error) {
	folders, err := s.docs.Folders(ctx, a)
	if err != nil {
		return err
	}
	dirs, err := folderDirs(folders, folderID)
	if err != nil {
		return err
	}
	// Pass 1: the path of each document.
	used := map[string]bool{}
	paths := map[string]string{}
	err = s.docs.Walk(ctx, a, func(d *quire.Document) error {
		dir, ok := dirs[d.FolderID]
		if !ok {
			return nil // outside the exported folder
		}
		paths[d.ID] = uniqueName(used, dir, safeName(d.Title), ".md")
		return ctx.Err()
	})
	if err != nil {
		return err
	}

	var folder *quire.Folder
	for i := range folders {
		if folders[i].ID == folderID {
			folder = &folders[i]
		}
	}
	written, recorded := 0, false
	defer func() {
		if err != nil && !recorded {
			// Cut midway (the client gone: its context may be done).
			s.docs.RecordExport(context.WithoutCancel(ctx), a, folder, written, false)
		}
	}()

	zw := zip.NewWriter(w)
	for _, f := range folders {
		if dir, ok := dirs[f.ID]; ok && dir != "" {
			if _, err := zw.CreateHeader(&zip.FileHeader{Name: dir + "/", Modified: f.UpdatedAt, Method: zip.Store}); err != nil {
				return err
			}
		}
	}
	var buf bytes.Buffer
	err = s.docs.Walk(ctx, a, func(d *quire.Document) error {
		p, ok := paths[d.ID]
		if !ok {
			return nil // outside the folder, or created since pass 1
		}
		// The document's files go in "<title>.files/" beside it, and its
		// links to them become relative.
		files, filePaths, err := s.exportFiles(ctx, a, d, p)
		if err != nil {
			return err
		}
		buf.Reset()
		writeFrontMatter(&buf, d)
		buf.WriteString(s.exportLinks(d.Content, path.Dir(p), paths, filePaths))
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: p, Modified: d.UpdatedAt, Method: zip.Deflate})
		if err != nil {
			return err
		}
		if _, err := fw.Write(buf.Bytes()); err != nil {
			return err
		}
		written++
		for i := range files {
			at := &files[i]
			fw, err := zw.CreateHeader(&zip.FileHeader{Name: filePaths[at.ID], Modified: at.CreatedAt, Method: zip.Deflate})
			if err != nil {
				return err
			}
			// Streamed a chunk per query: a file is never held whole.
			if _, err := io.Copy(fw, s.files.Open(ctx, a, at)); err != nil {
				return err
			}
		}
		return ctx.Err()
	})
	if err != nil {
		return err
	}
	// Recorded before the archive's directory is written: an export that
	// cannot be audited is never a whole archive.
	recorded = true
	if err := s.docs.RecordExport(ctx, a, folder, written, true); err != nil {
		return err
	}
	return zw.Close()
}

// exportFiles lists the files of the document exported at p and names
// each "<p without .md>.files/<name>" (" (2)"... when two share a name).
func (s *Service) exportFiles(ctx context.Context, a quire.Actor, d *quire.Document, p string) ([]quire.Attachment, map[string]string, error) {
	if s.files == nil {
		return nil, nil, nil
	}
	files, err := s.files.List(ctx, a, d.ID)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return nil, nil, nil // deleted since it was read
	}
	if err != nil || len(files) == 0 {
		return nil, nil, err
	}
	dir := strings.TrimSuffix(p, ".md") + ".files"
	used := map[string]bool{}
	out := make(map[string]string, len(files))
	for _, f := range files {
		ext := path.Ext(f.Name)
		out[f.ID] = uniqueName(used, dir, safeName(strings.TrimSuffix(f.Name, ext)), safeExt(ext))
	}
	return files, out, nil
}

// safeExt keeps an extension that is a dot and a few letters or digits.
func safeExt(ext string) string {
	if len(ext) < 2 || len(ext) > 10 {
		return ""
	}
	for _, c := range ext[1:] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return ""
		}
	}
	return ext
}

// exportLinks rewrites the links of content to exported documents, and to
// the document's own files, as paths relative to dir; other links stay as
// they are.
func (s *Service) exportLinks(content, dir string, paths, files map[string]string) string {
	return rewriteLinks(content, func(dest string) (string, bool) {
		if id, rest, ok := documentLink(dest, s.publicURL); ok {
			if p, ok := paths[id]; ok {
				return escapePath(relative(dir, p)) + rest, true
			}
			return "", false
		}
		if id, rest, ok := attachmentLink(dest, s.publicURL); ok {
			if p, ok := files[id]; ok {
				return escapePath(relative(dir, p)) + rest, true
			}
		}
		return "", false
	})
}

// folderDirs returns the directory of every exported folder ("" for the
// top), keyed by folder ID ("" for documents in no folder, when the whole
// space is exported). Siblings whose names come out the same get " (2)".
func folderDirs(folders []quire.Folder, root string) (map[string]string, error) {
	byID := make(map[string]*quire.Folder, len(folders))
	children := map[string][]*quire.Folder{}
	for i := range folders {
		f := &folders[i]
		byID[f.ID] = f
		children[f.ParentID] = append(children[f.ParentID], f)
	}
	dirs := map[string]string{}
	used := map[string]bool{}
	var walk func(parent, dir string, depth int)
	walk = func(parent, dir string, depth int) {
		if depth > 1000 {
			return // a cycle the store would never let exist
		}
		for _, f := range children[parent] {
			d := uniqueName(used, dir, safeName(f.Name), "")
			dirs[f.ID] = d
			walk(f.ID, d, depth+1)
		}
	}
	if root == "" {
		dirs[""] = ""
		walk("", "", 0)
		return dirs, nil
	}
	f, ok := byID[root]
	if !ok {
		return nil, quire.Errorf(quire.ENOTFOUND, "Folder not found")
	}
	top := safeName(f.Name)
	used[strings.ToLower(top)] = true
	dirs[root] = top
	walk(root, top, 0)
	return dirs, nil
}
