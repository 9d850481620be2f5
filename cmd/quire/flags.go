package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// command is one subcommand's flag set with environment twins.
type command struct {
	fs    *flag.FlagSet
	usage string
}

func newCommand(name, usage string) *command {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &command{fs: fs, usage: usage}
}

// envName is the environment twin of a flag: --lock-threshold is
// QUIRE_LOCK_THRESHOLD.
func envName(flagName string) string {
	return "QUIRE_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// envFlags defines flags that have an environment twin: each one's help
// names its variable, and names lists them for parse.
type envFlags struct {
	fs    *flag.FlagSet
	names []string
}

func (f *envFlags) add(name string, define func(help string), help string) {
	define(help + " (env " + envName(name) + ")")
	f.names = append(f.names, name)
}

func (f *envFlags) str(p *string, name, def, help string) {
	f.add(name, func(help string) { f.fs.StringVar(p, name, def, help) }, help)
}

func (f *envFlags) num(p *int, name string, def int, help string) {
	f.add(name, func(help string) { f.fs.IntVar(p, name, def, help) }, help)
}

func (f *envFlags) boolean(p *bool, name string, def bool, help string) {
	f.add(name, func(help string) { f.fs.BoolVar(p, name, def, help) }, help)
}

func (f *envFlags) dur(p *time.Duration, name string, def time.Duration, help string) {
	*p = def
	f.value(&durationFlag{p}, name, help)
}

func (f *envFlags) value(v flag.Value, name, help string) {
	f.add(name, func(help string) { f.fs.Var(v, name, help) }, help)
}

// parse applies environment twins (for the flags listed in withEnv that
// this command defines: a deployment sets QUIRE_PUBLIC_URL once for serve
// and every admin command alike), then the arguments, which win. Flags may stand before or after positional
// arguments. It returns the positional arguments, or errHelp after printing
// the usage to stdout when --help is given.
func (c *command) parse(args []string, getenv func(string) string, stdout io.Writer, withEnv ...string) ([]string, error) {
	for _, name := range withEnv {
		if c.fs.Lookup(name) == nil {
			continue
		}
		if v := getenv(envName(name)); v != "" {
			if err := c.fs.Set(name, v); err != nil {
				return nil, fmt.Errorf("invalid %s %q: %v", envName(name), v, err)
			}
		}
	}
	var positional []string
	for {
		if err := c.fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				c.printUsage(stdout)
				return nil, errHelp
			}
			// The flag package names flags -name; we write --name.
			return nil, fmt.Errorf("%s: %s", c.fs.Name(), strings.Replace(err.Error(), " -", " --", 1))
		}
		args = c.fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		if args[0] == "--" {
			return append(positional, args[1:]...), nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// printUsage prints the usage line and every flag as the README and the
// usage lines write them: --name, its kind, its meaning and its default.
func (c *command) printUsage(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s\n\nFlags:\n", c.usage)
	c.fs.VisitAll(func(f *flag.Flag) {
		kind, help := flag.UnquoteUsage(f)
		if _, ok := f.Value.(*durationFlag); ok {
			kind = "duration"
		}
		line := "  --" + f.Name
		if kind != "" {
			line += " " + kind
		}
		fmt.Fprintf(w, "%s\n    \t%s", line, help)
		def := f.DefValue
		if kind == "duration" {
			def = shortDuration(def)
		}
		if def != "" && def != "false" && def != "0" {
			fmt.Fprintf(w, " (default %s)", def)
		}
		fmt.Fprintln(w)
	})
}

// shortDuration writes a duration flag's default as a person would:
// 168h rather than 168h0m0s.
func shortDuration(s string) string {
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// durationFlag is a time.Duration flag whose error says how to write one:
// the flag package's own answers "parse error" to --login-window 15.
type durationFlag struct{ d *time.Duration }

func (f *durationFlag) String() string {
	if f.d == nil {
		return ""
	}
	return shortDuration(f.d.String())
}

func (f *durationFlag) Set(s string) error {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err == nil {
		*f.d = d
		return nil
	}
	if _, nerr := strconv.ParseFloat(strings.TrimSpace(s), 64); nerr == nil {
		n := strings.TrimSpace(s)
		return fmt.Errorf("a duration needs a unit: %sm for minutes, %sh for hours, %ss for seconds", n, n, n)
	}
	return errors.New("not a duration: write it as 90s, 15m, 1h or 168h")
}

// errHelp means the usage was printed on request: exit 0.
var errHelp = errors.New("help printed")

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// checkPublicURL returns the problem with a --public-url, or "". quire
// serves its pages, assets, API, cookies and the callbacks of single
// sign-on and passkeys at the root of its host: a URL with a path
// (https://example.com/wiki/ behind a proxy's location /wiki/) would mail
// links and redirect where nothing answers, so it is refused.
func checkPublicURL(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Sprintf("--public-url %q must be an http:// or https:// URL", s)
	case u.Path != "" && u.Path != "/":
		return fmt.Sprintf("--public-url %q has a path (%s): quire runs only at the root of a host, not under a path prefix; give it a host of its own (such as https://docs.example.com) and proxy all of it to quire", s, u.Path)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return fmt.Sprintf("--public-url %q must be only a scheme and a host (and port), without user, query or fragment", s)
	}
	return ""
}
