package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"unicode"

	"quire"
	"quire/attachments"
	"quire/documents"
	"quire/transfer"
)

// cmdExport writes every document (or one folder's) to a zip, as the
// export endpoint does for what its caller can see.
func cmdExport(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	a := newAdmin("export", getenv, stdout)
	var out, folder string
	var force bool
	a.c.fs.StringVar(&out, "out", "", "zip file to write")
	a.c.fs.StringVar(&folder, "folder", "", "export only this folder (an ID) and its subfolders")
	a.c.fs.BoolVar(&force, "force", false, "replace --out when it exists")
	defer a.close()
	if err := a.open(ctx, args, 0); err != nil {
		return err
	}
	if out == "" {
		return errors.New("export: --out is required")
	}
	if _, err := os.Stat(out); err == nil && !force {
		return fmt.Errorf("export: %s exists (give --force to replace it)", out)
	}
	public, err := a.store.Setting(ctx, quire.SettingPublicURL)
	if err != nil && quire.ErrorCode(err) != quire.ENOTFOUND {
		return err
	}
	x := transfer.New(documents.New(a.store, documents.Config{}), attachments.New(a.store, attachments.Config{}), public)
	// Everything: the CLI acts as an administrator that sees all; its
	// export is recorded as the CLI's (no actor, "via": "cli").
	everyone := quire.Actor{User: quire.User{ID: documents.CLIUserID, Name: "quire export", Role: quire.Role{Key: "cli", Docs: quire.LevelView, Admin: true}}}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".quire-export-*")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := writeSynced(tmp, func(w io.Writer) error { return x.Export(ctx, everyone, folder, w) }); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "export written to %s\n", out)
	return err
}

// cmdImport imports a zip or a directory of Markdown as the user --as.
func cmdImport(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	a := newAdmin("import", getenv, stdout)
	var as string
	opts := transfer.Options{Operator: true} // the operator's: ids no document has are kept
	a.c.fs.StringVar(&as, "as", "", "email of the user the documents are created by (needs write)")
	a.c.fs.StringVar(&opts.FolderID, "folder", "", "import under this folder (an ID)")
	a.c.fs.StringVar(&opts.Visibility, "visibility", "", "visibility of every document: private, department or public (default: each file's front matter, else department)")
	a.c.fs.StringVar(&opts.Status, "status", "", "status of every document: draft, review, published or archived (default: each file's front matter, else published)")
	a.withJSON()
	defer a.close()
	if err := a.open(ctx, args, 1); err != nil {
		return err
	}
	if as == "" {
		return errors.New("import: --as is required")
	}
	if err := opts.Check(); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	u, err := a.store.UserByEmail(ctx, quire.NormalizeEmail(as))
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return fmt.Errorf("import: no user with email %s", as)
	}
	if err != nil {
		return err
	}
	if u.Status != quire.UserActive {
		return fmt.Errorf("import: %s is not an active user", as)
	}
	actor := quire.Actor{User: *u, Request: quire.RequestInfo{}}
	public, err := a.store.Setting(ctx, quire.SettingPublicURL)
	if err != nil && quire.ErrorCode(err) != quire.ENOTFOUND {
		return err
	}
	x := transfer.New(documents.New(a.store, documents.Config{}), attachments.New(a.store, attachments.Config{}), public)
	src := a.positional[0]
	fi, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	var rep *transfer.Report
	if fi.IsDir() {
		rep, err = x.ImportDir(ctx, actor, src, opts)
	} else {
		f, ferr := os.Open(src)
		if ferr != nil {
			return fmt.Errorf("import: %w", ferr)
		}
		defer f.Close()
		rep, err = x.ImportZip(ctx, actor, f, fi.Size(), opts)
	}
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if a.json {
		return json.NewEncoder(stdout).Encode(rep)
	}
	// Names come from the archive: one with control characters (an escape
	// sequence, a carriage return) is printed quoted, never to the
	// terminal as is.
	for _, d := range rep.Created {
		fmt.Fprintf(stdout, "created  %s  %s\n", printable(d.Path), d.ID)
	}
	for _, d := range rep.Updated {
		fmt.Fprintf(stdout, "updated  %s  %s\n", printable(d.Path), d.ID)
	}
	for _, r := range rep.Refused {
		fmt.Fprintf(stdout, "refused  %s: %s\n", printable(r.Path), printable(r.Reason))
	}
	_, err = fmt.Fprintf(stdout, "%d created, %d updated, %d refused\n", len(rep.Created), len(rep.Updated), len(rep.Refused))
	return err
}

// printable is s when every character of it prints as itself, else s
// quoted as Go quotes it (control and bidirectional formatting characters
// escaped).
func printable(s string) string {
	for _, r := range s {
		if !strconv.IsPrint(r) && r != ' ' || unicode.Is(unicode.Bidi_Control, r) {
			return strconv.Quote(s)
		}
	}
	return s
}
