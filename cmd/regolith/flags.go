package main

import (
	"flag"
	"fmt"
	"os"
)

// newFlags makes a command's flag set with a usage text: what the command does, how to
// call it, then every flag with its default.
func newFlags(name, args, about string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: regolith %s %s\n\n%s\n\nFlags:\n", name, args, about)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, allowing flags after positional arguments (`inspect FILE --json`),
// and leaves the positional ones in fs.Args(). --help prints the usage and ends the command
// successfully.
func parseFlags(fs *flag.FlagSet, args []string) (help bool, err error) {
	var pos []string
	for {
		if err = fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				return true, nil
			}
			return false, err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	return false, fs.Parse(append([]string{"--"}, pos...))
}
