package main

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// readmeTable returns the rows of the README table whose header line is
// header, each as its cells (with `\|` read as `|`).
func readmeTable(t *testing.T, header string) [][]string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if l != header {
			continue
		}
		var rows [][]string
		for _, l := range lines[i+2:] {
			if !strings.HasPrefix(l, "|") {
				break
			}
			l = strings.ReplaceAll(strings.Trim(l, "|"), `\|`, "\x00")
			var cells []string
			for _, c := range strings.Split(l, "|") {
				cells = append(cells, strings.TrimSpace(strings.ReplaceAll(c, "\x00", "|")))
			}
			rows = append(rows, cells)
		}
		return rows
	}
	t.Fatalf("README has no table %q", header)
	return nil
}

// TestREADMEAgreesWithHelp keeps the README's two tables, quire --help and
// each command's --help saying the same thing.
func TestREADMEAgreesWithHelp(t *testing.T) {
	t.Parallel()
	t.Run("the CLI table lists the usage lines of quire --help, in order", func(t *testing.T) {
		var readme, help []string
		for _, row := range readmeTable(t, "| command | effect |") {
			readme = append(readme, strings.Trim(row[0], "`"))
		}
		out := mustCLI(t, env(nil), "--help")
		for _, c := range commands {
			help = append(help, c.usage)
			if !strings.Contains(out, "  "+c.usage+"\n") {
				t.Errorf("quire --help lacks %q", c.usage)
			}
			sub := mustCLI(t, env(nil), append(strings.Fields(c.name), "--help")...)
			if !strings.HasPrefix(sub, "Usage: "+c.usage+"\n") {
				t.Errorf("quire %s --help begins %q", c.name, strings.SplitN(sub, "\n", 2)[0])
			}
			// Every flag of the usage line is a flag of the command, and
			// the other way round (--db, which every command takes, aside).
			used := map[string]bool{}
			for _, m := range regexp.MustCompile(`--([a-z-]+)`).FindAllStringSubmatch(c.usage, -1) {
				used[m[1]] = true
			}
			defined := map[string]bool{}
			for _, m := range regexp.MustCompile(`(?m)^  --([a-z-]+)`).FindAllStringSubmatch(sub, -1) {
				if m[1] != "db" {
					defined[m[1]] = true
				}
			}
			if d := cmp.Diff(defined, used); d != "" {
				t.Errorf("quire %s: flags of --help (-) and of the usage line (+):\n%s", c.name, d)
			}
		}
		if d := cmp.Diff(help, readme); d != "" {
			t.Errorf("usage lines (-) and README table (+):\n%s", d)
		}
	})

	t.Run("the configuration table lists serve's flags with their defaults", func(t *testing.T) {
		c, _, _ := serveFlags()
		help := map[string]string{}
		for _, m := range regexp.MustCompile(`(?m)^  --([a-z-]+).*\n.*?(?:\(default (.*)\))?$`).FindAllStringSubmatch(mustCLI(t, env(nil), "serve", "--help"), -1) {
			help[m[1]] = m[2]
		}
		readme := map[string]string{}
		for _, row := range readmeTable(t, "| flag | default | meaning |") {
			var names []string
			for _, m := range regexp.MustCompile("`--([a-z-]+)`").FindAllStringSubmatch(row[0], -1) {
				names = append(names, m[1])
			}
			defs := strings.Split(row[1], ", ")
			for i, name := range names {
				def := defs[0]
				if len(defs) == len(names) {
					def = defs[i]
				}
				def = strings.Trim(def, "`")
				switch {
				case def == "(none)" || def == "false":
					def = ""
				case strings.Contains(def, "<"):
					def = help[name] // derived from another flag: described, not given
				}
				readme[name] = def
			}
		}
		want := map[string]string{}
		c.fs.VisitAll(func(f *flag.Flag) { want[f.Name] = help[f.Name] })
		if d := cmp.Diff(want, readme); d != "" {
			t.Errorf("quire serve --help (-) and the README's configuration table (+):\n%s", d)
		}
	})
}

// TestREADMENamesTheGoVersion: a newcomer learns from the README which Go
// builds quire: the go line of go.mod, as "Go 1.26".
func TestREADMENamesTheGoVersion(t *testing.T) {
	t.Parallel()
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := "Go " + string(m[1]) + " or newer"; !strings.Contains(string(readme), want) {
		t.Errorf("README.md does not say %q", want)
	}
}
