package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
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
			return nil, fmt.Errorf("%s: %v", c.fs.Name(), err)
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

func (c *command) printUsage(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s\n\nFlags:\n", c.usage)
	c.fs.SetOutput(w)
	c.fs.PrintDefaults()
	c.fs.SetOutput(io.Discard)
}

// errHelp means the usage was printed on request: exit 0.
var errHelp = errors.New("help printed")

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
