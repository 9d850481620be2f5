package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"quire"
	"quire/auth"
	"quire/internal/userjson"
)

// admin is what every administration command shares: its flags, the open
// store and the auth service.
type admin struct {
	c          *command
	db         string
	public     string
	json       bool
	store      quire.Store
	auth       *auth.Service
	stdout     io.Writer
	getenv     func(string) string
	positional []string
	// creates lets the command create a database that does not exist
	// (migrate); every other admin command refuses one.
	creates bool
	// guessedURL: no --public-url was given and no server has recorded
	// one on this database (resolvePublicURL).
	guessedURL bool
}

// commands are the usage lines of every command but serve, in the order
// quire --help lists them; each command's --help prints its own, and the
// README's table of the CLI lists the same lines (TestREADMEAgreesWithHelp).
var commands = []struct{ name, usage string }{
	{"user add", "quire user add --email E --name N --role R [--department D] [--password P] [--public-url U] [--json]"},
	{"user invite", "quire user invite --email E --name N --role R [--department D] [--public-url U] [--json]"},
	{"user set-role", "quire user set-role EMAIL ROLE [--json]"},
	{"user disable", "quire user disable EMAIL [--json]"},
	{"user enable", "quire user enable EMAIL [--json]"},
	{"user unlock", "quire user unlock EMAIL [--json]"},
	{"user reset-mfa", "quire user reset-mfa EMAIL [--json]"},
	{"user list", "quire user list [--json]"},
	{"project add", "quire project add NAME [--member EMAIL]... [--json]"},
	{"project add-member", "quire project add-member NAME EMAIL [--json]"},
	{"role list", "quire role list [--json]"},
	{"role set", "quire role set KEY [--label L] [--docs none|view|write] [--admin | --no-admin] [--json]"},
	{"migrate", "quire migrate"},
	{"backup", "quire backup --out FILE [--force]"},
	{"export", "quire export --out FILE.zip [--folder ID] [--force]"},
	{"import", "quire import PATH --as EMAIL [--folder ID] [--visibility V] [--status S] [--json]"},
	{"healthcheck", "quire healthcheck [--addr HOST:PORT] [--tls-cert FILE]"},
}

func usageOf(name string) string {
	for _, c := range commands {
		if c.name == name {
			return c.usage
		}
	}
	panic("no usage line for " + name)
}

func newAdmin(name string, getenv func(string) string, stdout io.Writer) *admin {
	a := &admin{c: newCommand(name, usageOf(name)), getenv: getenv, stdout: stdout}
	a.c.fs.StringVar(&a.db, "db", "./quire.db", "SQLite file path or postgres:// URL (env QUIRE_DB)")
	return a
}

func (a *admin) withJSON() {
	a.c.fs.BoolVar(&a.json, "json", false, "print the record as one JSON object")
}

// open parses args (wanting n positional arguments) and opens the store.
func (a *admin) open(ctx context.Context, args []string, n int) error {
	pos, err := a.c.parse(args, a.getenv, a.stdout, "db", "public-url")
	if err != nil {
		return err
	}
	if len(pos) != n {
		return fmt.Errorf("%s: want %d argument(s), got %d (usage: %s)", a.c.fs.Name(), n, len(pos), a.c.usage)
	}
	a.positional = pos
	a.store, err = openStore(ctx, a.db, !a.creates)
	if err != nil {
		return err
	}
	cfg := auth.DefaultConfig()
	if a.c.fs.Lookup("public-url") != nil {
		if err := a.resolvePublicURL(ctx); err != nil {
			return err
		}
		cfg.PublicURL = a.public
	}
	a.auth, err = auth.New(a.store, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return err
}

// defaultPublicURL is where quire serve is reached with its defaults.
const defaultPublicURL = "http://127.0.0.1:8080"

// resolvePublicURL sets a.public, the base of the links a command mails:
// --public-url (or QUIRE_PUBLIC_URL) when given, else the one the last
// quire serve on this database recorded, else defaultPublicURL, which
// a.guessedURL then reports.
func (a *admin) resolvePublicURL(ctx context.Context) error {
	if a.public != "" {
		if problem := checkPublicURL(a.public); problem != "" {
			return errors.New(problem)
		}
		a.public = strings.TrimRight(a.public, "/")
		return nil
	}
	v, err := a.store.Setting(ctx, quire.SettingPublicURL)
	switch {
	case quire.ErrorCode(err) == quire.ENOTFOUND:
		a.public, a.guessedURL = defaultPublicURL, true
		return nil
	case err != nil:
		return err
	}
	a.public = v
	return nil
}

// given reports whether the flag name was set on the command line.
func (a *admin) given(name string) bool {
	set := false
	a.c.fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func (a *admin) close() {
	if a.store != nil {
		a.store.Close()
	}
}

// print writes v as JSON with --json, else the text line.
func (a *admin) print(v any, text string) error {
	if a.json {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(a.stdout, string(b))
		return err
	}
	_, err := fmt.Fprintln(a.stdout, text)
	return err
}

// userRecord is USER, as the API writes it, and the account's status.
type userRecord struct {
	userjson.User
	Status    string `json:"status"`
	SetupLink string `json:"setupLink,omitempty"`
	// InvitedAgain: the email was still invited, and got a new invitation.
	InvitedAgain bool `json:"invitedAgain,omitempty"`
}

func newUserRecord(u *quire.User) userRecord {
	return userRecord{User: userjson.Of(u), Status: string(u.Status)}
}

type projectRecord struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Members []string `json:"members"`
}

type roleRecord struct {
	ID    string `json:"id"`
	Key   string `json:"key"`
	Label string `json:"label"`
	Docs  string `json:"docs"`
	Admin bool   `json:"admin"`
}

func newRoleRecord(r quire.Role) roleRecord {
	return roleRecord{ID: r.Key, Key: r.Key, Label: r.Label, Docs: r.Docs.String(), Admin: r.Admin}
}

func cmdAdmin(ctx context.Context, group, sub string, args []string, getenv func(string) string, stdout io.Writer) error {
	switch group + " " + sub {
	case "user add", "user invite":
		return userAdd(ctx, sub, args, getenv, stdout)
	case "user set-role":
		a := newAdmin("user set-role", getenv, stdout)
		a.withJSON()
		defer a.close()
		if err := a.open(ctx, args, 2); err != nil {
			return err
		}
		if err := a.auth.SetRole(ctx, a.positional[0], a.positional[1]); err != nil {
			return fmt.Errorf("user set-role %s: %w", a.positional[0], err)
		}
		return a.printUser(ctx, a.positional[0], "role set")
	case "user disable":
		a := newAdmin("user disable", getenv, stdout)
		a.withJSON()
		defer a.close()
		if err := a.open(ctx, args, 1); err != nil {
			return err
		}
		if err := a.auth.Disable(ctx, a.positional[0]); err != nil {
			return fmt.Errorf("user disable %s: %w", a.positional[0], err)
		}
		return a.printUser(ctx, a.positional[0], "disabled; every session revoked")
	case "user enable":
		a := newAdmin("user enable", getenv, stdout)
		a.withJSON()
		defer a.close()
		if err := a.open(ctx, args, 1); err != nil {
			return err
		}
		if err := a.auth.Enable(ctx, a.positional[0]); err != nil {
			return fmt.Errorf("user enable %s: %w", a.positional[0], err)
		}
		return a.printUser(ctx, a.positional[0], "enabled")
	case "user unlock":
		a := newAdmin("user unlock", getenv, stdout)
		a.withJSON()
		defer a.close()
		if err := a.open(ctx, args, 1); err != nil {
			return err
		}
		email := quire.NormalizeEmail(a.positional[0])
		if err := a.auth.Unlock(ctx, email); err != nil {
			return err
		}
		// Counters exist per email whether or not an account does.
		if u, err := a.store.UserByEmail(ctx, email); err == nil {
			return a.print(newUserRecord(u), email+": unlocked")
		}
		return a.print(map[string]string{"id": email, "email": email}, email+": unlocked")
	case "user reset-mfa":
		// The way back in for an administrator who lost the authenticator
		// and the recovery codes, when no other administrator can reset it.
		a := newAdmin("user reset-mfa", getenv, stdout)
		a.withJSON()
		defer a.close()
		if err := a.open(ctx, args, 1); err != nil {
			return err
		}
		u, err := a.store.UserByEmail(ctx, quire.NormalizeEmail(a.positional[0]))
		if err != nil {
			return fmt.Errorf("user reset-mfa %s: %w", a.positional[0], err)
		}
		if err := a.auth.MFA().ResetByCLI(ctx, u.ID); err != nil {
			return fmt.Errorf("user reset-mfa %s: %w", a.positional[0], err)
		}
		return a.printUser(ctx, a.positional[0], "second factor reset")
	case "user list":
		a := newAdmin("user list", getenv, stdout)
		a.withJSON()
		defer a.close()
		if err := a.open(ctx, args, 0); err != nil {
			return err
		}
		users, err := a.store.ListUsers(ctx)
		if err != nil {
			return err
		}
		if a.json {
			recs := make([]userRecord, 0, len(users))
			for i := range users {
				recs = append(recs, newUserRecord(&users[i]))
			}
			return a.print(recs, "")
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "EMAIL\tNAME\tROLE\tDEPARTMENT\tSTATUS")
		for _, u := range users {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", u.Email, u.Name, u.Role.Key, u.DepartmentName, u.Status)
		}
		return tw.Flush()
	case "project add":
		a := newAdmin("project add", getenv, stdout)
		a.withJSON()
		var members stringList
		a.c.fs.Var(&members, "member", "email of a member (repeatable)")
		defer a.close()
		if err := a.open(ctx, args, 1); err != nil {
			return err
		}
		name := strings.TrimSpace(a.positional[0])
		if name == "" {
			return errors.New("project add: the name is empty")
		}
		var ids []string
		for _, m := range members {
			u, err := a.store.UserByEmail(ctx, quire.NormalizeEmail(m))
			if err != nil {
				return fmt.Errorf("member %s: %w", m, err)
			}
			ids = append(ids, u.ID)
		}
		ev := quire.CLIEvent(quire.ActionProjectCreated, time.Now()).On(quire.TargetProject, "", name)
		p, err := a.store.Recording(ev).CreateProject(ctx, name)
		if err != nil {
			return err
		}
		for i, id := range ids {
			if err := a.store.Recording(memberAdded(p, id, members[i])).AddProjectMember(ctx, p.ID, id); err != nil {
				return err
			}
		}
		return a.printProject(ctx, name)
	case "project add-member":
		a := newAdmin("project add-member", getenv, stdout)
		a.withJSON()
		defer a.close()
		if err := a.open(ctx, args, 2); err != nil {
			return err
		}
		p, err := a.store.ProjectByName(ctx, a.positional[0])
		if err != nil {
			return err
		}
		u, err := a.store.UserByEmail(ctx, quire.NormalizeEmail(a.positional[1]))
		if err != nil {
			return err
		}
		if err := a.store.Recording(memberAdded(p, u.ID, u.Email)).AddProjectMember(ctx, p.ID, u.ID); err != nil {
			return err
		}
		return a.printProject(ctx, p.Name)
	case "role list":
		a := newAdmin("role list", getenv, stdout)
		a.withJSON()
		defer a.close()
		if err := a.open(ctx, args, 0); err != nil {
			return err
		}
		roles, err := a.store.Roles(ctx)
		if err != nil {
			return err
		}
		if a.json {
			recs := make([]roleRecord, 0, len(roles))
			for _, r := range roles {
				recs = append(recs, newRoleRecord(r))
			}
			return a.print(recs, "")
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KEY\tLABEL\tDOCS.DOCUMENTS\tSEES ALL")
		for _, r := range roles {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%t\n", r.Key, r.Label, r.Docs, r.Admin)
		}
		return tw.Flush()
	case "role set":
		a := newAdmin("role set", getenv, stdout)
		a.withJSON()
		var label, docsLevel string
		var isAdmin, notAdmin bool
		a.c.fs.StringVar(&label, "label", "", "display label of the role")
		a.c.fs.StringVar(&docsLevel, "docs", "", "level on docs.documents: none, view or write")
		a.c.fs.BoolVar(&isAdmin, "admin", false, "the role sees all documents (--admin=false or --no-admin takes that away)")
		a.c.fs.BoolVar(&notAdmin, "no-admin", false, "the role no longer sees all documents")
		defer a.close()
		if err := a.open(ctx, args, 1); err != nil {
			return err
		}
		// Only the flags given change the role: a flag left out keeps
		// what the role has.
		var c auth.RoleChange
		if a.given("label") {
			c.Label = &label
		}
		if a.given("docs") {
			level, ok := quire.ParseLevel(docsLevel)
			if !ok {
				return fmt.Errorf("role set: --docs must be none, view or write, not %q", docsLevel)
			}
			c.Docs = &level
		}
		switch {
		case a.given("admin") && a.given("no-admin"):
			return errors.New("role set: give --admin or --no-admin, not both")
		case a.given("admin"):
			c.Admin = &isAdmin
		case a.given("no-admin"):
			v := !notAdmin
			c.Admin = &v
		}
		r, err := a.auth.UpdateRole(ctx, a.positional[0], c)
		if err != nil {
			return fmt.Errorf("role set %s: %w", a.positional[0], err)
		}
		return a.print(newRoleRecord(*r), fmt.Sprintf("role %s: %s, docs.documents %s, sees all %t", r.Key, r.Label, r.Docs, r.Admin))
	}
	return fmt.Errorf("unknown command %q (see quire --help)", group+" "+sub)
}

func userAdd(ctx context.Context, sub string, args []string, getenv func(string) string, stdout io.Writer) error {
	a := newAdmin("user "+sub, getenv, stdout)
	a.withJSON()
	var nu auth.NewUser
	fs := a.c.fs
	fs.StringVar(&nu.Email, "email", "", "email address")
	fs.StringVar(&nu.Name, "name", "", "display name")
	fs.StringVar(&nu.Role, "role", "", "role key (see quire role list)")
	fs.StringVar(&nu.Department, "department", "", "department name, created when new")
	fs.StringVar(&a.public, "public-url", "", "base of the setup link (env QUIRE_PUBLIC_URL; default: the --public-url of the last quire serve on this database, else "+defaultPublicURL+")")
	if sub == "add" {
		fs.StringVar(&nu.Password, "password", "", "password; without it the user is invited")
	}
	defer a.close()
	if err := a.open(ctx, args, 0); err != nil {
		return err
	}
	// An email that is still invited gets a new invitation rather than a
	// second user: say which happened.
	prior, err := a.store.UserByEmail(ctx, quire.NormalizeEmail(nu.Email))
	if err != nil && quire.ErrorCode(err) != quire.ENOTFOUND {
		return err
	}
	u, link, err := a.auth.CreateUser(ctx, nu)
	if err != nil {
		return fmt.Errorf("user %s: %w", sub, err)
	}
	rec := newUserRecord(u)
	rec.SetupLink = link
	text := fmt.Sprintf("created %s (%s, %s)", u.Email, u.Role.Key, u.Status)
	if prior != nil && link != "" {
		rec.InvitedAgain = true
		text = fmt.Sprintf("invited %s again (%s, still invited): a new setup link; the earlier ones work until one of them is used", u.Email, u.Role.Key)
	}
	if link != "" {
		text += "\nsetup link (mailed by a running quire serve on this database): " + link
		if a.guessedURL {
			text += "\nno quire serve has recorded its --public-url on this database yet: the link uses " + defaultPublicURL + "; pass --public-url if users reach quire elsewhere"
		}
	}
	return a.print(rec, text)
}

func (a *admin) printUser(ctx context.Context, email, what string) error {
	u, err := a.store.UserByEmail(ctx, quire.NormalizeEmail(email))
	if err != nil {
		return err
	}
	return a.print(newUserRecord(u), u.Email+": "+what)
}

// memberAdded is the event of adding the user id (email) to p.
func memberAdded(p *quire.Project, id, email string) *quire.Event {
	return quire.CLIEvent(quire.ActionProjectMemberAdded, time.Now()).On(quire.TargetProject, p.ID, p.Name).
		With("userId", id).With("email", quire.NormalizeEmail(email))
}

func (a *admin) printProject(ctx context.Context, name string) error {
	p, err := a.store.ProjectByName(ctx, name)
	if err != nil {
		return err
	}
	rec := projectRecord{ID: p.ID, Name: p.Name, Members: []string{}}
	for _, id := range p.MemberIDs {
		if u, err := a.store.UserByID(ctx, id); err == nil {
			rec.Members = append(rec.Members, u.Email)
		}
	}
	return a.print(rec, fmt.Sprintf("project %s: %d member(s)", p.Name, len(rec.Members)))
}

func cmdMigrate(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	a := newAdmin("migrate", getenv, stdout)
	a.creates = true
	defer a.close()
	if err := a.open(ctx, args, 0); err != nil {
		return err
	}
	for _, name := range migrated(a.store) {
		fmt.Fprintf(stdout, "applied %s\n", name)
	}
	_, err := fmt.Fprintln(stdout, "database is up to date")
	return err
}

func cmdBackup(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	a := newAdmin("backup", getenv, stdout)
	var out string
	var force bool
	a.c.fs.StringVar(&out, "out", "", "file to write the copy to")
	a.c.fs.BoolVar(&force, "force", false, "replace --out when it exists")
	defer a.close()
	if err := a.open(ctx, args, 0); err != nil {
		return err
	}
	if out == "" {
		return errors.New("backup: --out is required")
	}
	errExists := fmt.Errorf("backup: %s exists (--force replaces it)", out)
	if _, err := os.Lstat(out); err == nil && !force {
		return errExists
	}
	// Write beside the target and rename, so a failed backup never leaves a
	// truncated file under the name asked for.
	dir := filepath.Dir(out)
	inPlace := false
	tmp, err := os.CreateTemp(dir, ".quire-backup-*")
	if errors.Is(err, fs.ErrPermission) {
		// The folder is not this user's (the service user and root's
		// /var/backups): a file made there for it by its owner is written
		// in place, from a complete copy staged in the temporary
		// directory; without one there is nowhere to write.
		if _, serr := os.Lstat(out); serr != nil {
			return fmt.Errorf("backup: this user may not create files in %s: give an --out in a folder it may write to (install -d -o USER %s), or have %s created for it first", dir, dir, out)
		}
		inPlace = true
		tmp, err = os.CreateTemp("", ".quire-backup-*")
	}
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := writeSynced(tmp, func(w io.Writer) error { return a.store.Backup(ctx, w) }); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if inPlace {
		if err := copyInto(out, tmp.Name()); err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		_, err = fmt.Fprintf(stdout, "backup written to %s (in place: this user may not create files in %s)\n", out, dir)
		return err
	}
	if force {
		err = os.Rename(tmp.Name(), out)
	} else {
		// A link fails when out exists: a file made there while the
		// copy was written is not replaced either.
		err = os.Link(tmp.Name(), out)
		if errors.Is(err, fs.ErrExist) {
			return errExists
		}
	}
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "backup written to %s\n", out)
	return err
}

// writeSynced fills f with write, makes it reach the disk and closes it;
// f is closed whatever fails.
func writeSynced(f *os.File, write func(w io.Writer) error) error {
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// copyInto replaces the content of the existing file dst with that of src,
// on disk when it returns. dst keeps its owner and mode; a failure part way
// leaves it incomplete, which the error says.
func copyInto(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, in); err != nil {
		f.Close()
		return fmt.Errorf("%s is incomplete: %w", dst, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("%s may be incomplete: %w", dst, err)
	}
	return f.Close()
}
