package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"quire/internal/notice"
)

// needRoot skips t unless the test runs as root (it changes owners, runs
// commands as another user or chroots), or fails it when
// QUIRE_REQUIRE_ROOT=1, as CI (which runs as root) sets it.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("QUIRE_REQUIRE_ROOT") == "1" {
		t.Fatal("QUIRE_REQUIRE_ROOT=1 but the test does not run as root")
	}
	msg := "NOT ROOT: " + t.Name() + " SKIPPED; run it as root, or set QUIRE_REQUIRE_ROOT=1 to make this a failure."
	notice.Print(msg)
	t.Skip(msg)
}

// openUp makes dir and its parents up to the system's temporary directory
// traversable by every user (t.TempDir makes them 0700).
func openUp(t *testing.T, dir string) {
	t.Helper()
	for d := dir; d != os.TempDir() && d != "/" && d != "."; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// nobody is the user the unprivileged commands run as.
const nobody = 65534

// runAs runs bin with args as the user uid, and returns its output.
func runAs(t *testing.T, uid int, bin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(nodeEnv(), "HOME=/")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// chownAll gives dir and everything in it to uid.
func chownAll(t *testing.T, dir string, uid int) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBackupAsTheServiceUser: the service user, who may write its database's
// folder but not /var/backups (root's), backs up into a file made there for
// it (written in place, from a complete copy staged in the temporary
// directory); where it may create nothing, it is told what to do in one line.
func TestBackupAsTheServiceUser(t *testing.T) {
	t.Parallel()
	needRoot(t)
	bin := buildQuire(t)
	openUp(t, filepath.Dir(bin))
	root := t.TempDir()
	openUp(t, root)
	data := filepath.Join(root, "data")
	backups := filepath.Join(root, "backups") // root's, 0755: /var/backups
	for _, d := range []string{data, backups} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	db := filepath.Join(data, "quire.db")
	mustCLI(t, env(map[string]string{"QUIRE_DB": db}), "migrate")
	mustCLI(t, env(map[string]string{"QUIRE_DB": db}), "user", "add", "--email", "ada@example.com", "--name", "Ada", "--role", "admin",
		"--password", "correct horse battery staple 42")
	chownAll(t, data, nobody)

	out := filepath.Join(backups, "quire.db")
	msg, err := runAs(t, nobody, bin, "backup", "--db", db, "--out", out)
	if err == nil || !strings.Contains(msg, "may not create files in "+backups) || strings.Count(strings.TrimSpace(msg), "\n") > 0 {
		t.Errorf("backup into a folder the user may not write: err %v, output %q", err, msg)
	}

	// The administrator makes the file for the service user.
	if err := os.WriteFile(out, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(out, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if msg, err := runAs(t, nobody, bin, "backup", "--db", db, "--out", out); err == nil || !strings.Contains(msg, "--force") {
		t.Errorf("backup over an existing file without --force: err %v, output %q", err, msg)
	}
	if msg, err := runAs(t, nobody, bin, "backup", "--db", db, "--out", out, "--force"); err != nil {
		t.Fatalf("backup --force into the file made for the user: %v: %s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil || !bytes.HasPrefix(b, sqliteHeader) {
		t.Fatalf("the backup is not a SQLite file: %v, %.20q", err, b)
	}
	if list := mustCLI(t, env(map[string]string{"QUIRE_DB": out}), "user", "list"); !strings.Contains(list, "ada@example.com") {
		t.Errorf("the backup's users: %q", list)
	}
	if entries, _ := os.ReadDir(backups); len(entries) != 1 {
		t.Errorf("the backup folder holds %d files, want the backup alone", len(entries))
	}
	// Where the user may write, the copy is still made beside --out and
	// renamed: no change there.
	mine := filepath.Join(data, "mine.db")
	if msg, err := runAs(t, nobody, bin, "backup", "--db", db, "--out", mine); err != nil || strings.Contains(msg, "in place") {
		t.Errorf("backup into the user's own folder: %v: %s", err, msg)
	}
}
