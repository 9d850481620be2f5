// Command quire runs the quire documentation service and administers it.
//
//	quire serve          run the service (SQLite ./quire.db by default)
//	quire user ...       add, invite, set-role, disable, enable, unlock, list
//	quire project ...    add, add-member
//	quire role ...       list, set
//	quire migrate        apply migrations
//	quire backup         take a consistent online copy of the database
//	quire export         write every document to a zip of Markdown
//	quire import         import a zip or a folder of Markdown
//	quire healthcheck    exit 0 when a running quire serve answers /healthz
//	quire version        the version, commit and Go version (also --version)
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"quire/internal/buildinfo"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "quire: %v\n", oneLine(err))
		os.Exit(1)
	}
}

// usage is what quire --help prints.
var usage = func() string {
	var b strings.Builder
	b.WriteString("quire: a documentation service for a team.\n\nUsage:\n")
	b.WriteString("  quire serve [flags]    run the service (see quire serve --help)\n")
	b.WriteString("  quire version          the version, commit and Go version of this binary (also --version)\n")
	for _, c := range commands {
		b.WriteString("  " + c.usage + "\n")
	}
	b.WriteString(`
Every command but healthcheck takes --db (default ./quire.db, or QUIRE_DB): a SQLite file path,
or a postgres:// URL. Only serve and migrate create a database that does not
exist. With --json a command prints its record (or list) as JSON.
Each command's --help lists its flags.
`)
	return b.String()
}()

// run is the whole program: it reads the environment only through getenv
// and stops on SIGINT or SIGTERM.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := dispatch(ctx, args, getenv, stdout, stderr)
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}

func dispatch(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	case "version", "--version", "-version":
		if len(args) > 1 {
			return fmt.Errorf("version: unexpected argument %q", args[1])
		}
		_, err := fmt.Fprintln(stdout, buildinfo.Read())
		return err
	case "serve":
		return cmdServe(ctx, args[1:], getenv, stdout, stderr)
	case "migrate":
		return cmdMigrate(ctx, args[1:], getenv, stdout)
	case "backup":
		return cmdBackup(ctx, args[1:], getenv, stdout)
	case "export":
		return cmdExport(ctx, args[1:], getenv, stdout)
	case "import":
		return cmdImport(ctx, args[1:], getenv, stdout)
	case "healthcheck":
		return cmdHealthcheck(ctx, args[1:], getenv, stdout)
	case "user", "project", "role":
		if len(args) < 2 {
			return fmt.Errorf("%s: no subcommand given (see quire --help)", args[0])
		}
		if args[1] == "-h" || args[1] == "--help" {
			fmt.Fprint(stdout, usage)
			return nil
		}
		return cmdAdmin(ctx, args[0], args[1], args[2:], getenv, stdout)
	}
	return fmt.Errorf("unknown command %q (see quire --help)", args[0])
}

// oneLine keeps an error message on one line, as the CLI contract asks.
func oneLine(err error) string {
	b := []byte(err.Error())
	for i, c := range b {
		if c == '\n' || c == '\r' {
			b[i] = ' '
		}
	}
	return string(b)
}
