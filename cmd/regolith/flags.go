package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
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

// autoBool is a boolean flag whose default depends on other flags: it remembers whether it
// was given (--name, --name=true, --name=false) and otherwise takes the default its command
// passes to on.
type autoBool struct{ set, v bool }

func (b *autoBool) IsBoolFlag() bool { return true }

func (b *autoBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	b.set, b.v = true, v
	return nil
}

func (b *autoBool) String() string {
	if b == nil || !b.set {
		return "auto"
	}
	return strconv.FormatBool(b.v)
}

// on is the flag's value: as given, or def.
func (b *autoBool) on(def bool) bool {
	if b.set {
		return b.v
	}
	return def
}

// explicitlyOn reports whether the flag was given as true.
func (b *autoBool) explicitlyOn() bool { return b.set && b.v }

// directIOUsage explains --direct-io, which defaults to on with --mem. docs/BENCH.md: decode of
// a 30 GiB model with --mem 8GiB was 3.8x slower with buffered reads than with O_DIRECT in an
// 8 GiB cgroup, and 6.8x slower with no memory limit at all (328 vs 2760 MB/s during misses).
const directIOUsage = "with --mem: read experts with O_DIRECT, bypassing the page cache (default: on with --mem;\n" +
	"--direct-io=false reads through the page cache and advises it to drop what was read). Where the\n" +
	"file system refuses O_DIRECT the store says so and reads through the page cache"
