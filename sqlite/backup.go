package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
)

// Backup writes a consistent copy of the database to w while the service
// keeps running. VACUUM INTO reads one snapshot (WAL lets writers go on
// meanwhile) and writes a compact copy to a temporary file beside the
// database, on the same file system, which is then streamed to w and
// removed.
func (db *DB) Backup(ctx context.Context, w io.Writer) (err error) {
	f, err := os.CreateTemp(filepath.Dir(db.path), ".quire-backup-*.db")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	tmp := f.Name()
	// VACUUM INTO accepts an existing file only when it is empty.
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("backup: %w", err)
	}
	defer func() {
		if rerr := os.Remove(tmp); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
			err = fmt.Errorf("backup: %w", rerr)
		}
	}()
	if err := db.vacuumInto(ctx, tmp); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	f, err = os.Open(tmp)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer f.Close()
	if _, err := io.Copy(w, f); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return nil
}

// vacuumInto runs VACUUM INTO on a connection of its own: the reading pool
// is query_only, which refuses VACUUM INTO, and the one writing connection
// would hold up every write for the length of the copy.
func (db *DB) vacuumInto(ctx context.Context, target string) error {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	conn, err := sql.Open("sqlite", "file:"+db.path+"?"+q.Encode())
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `VACUUM INTO ?`, target); err != nil {
		return fmt.Errorf("vacuum into %s: %w", target, err)
	}
	return nil
}
