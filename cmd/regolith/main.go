// Command regolith runs Mixture-of-Experts language models whose experts stream from disk.
package main

import (
	"fmt"
	"os"
)

type command struct {
	name, summary string
	run           func(args []string) error
}

var commands []command

func usage() {
	fmt.Fprintf(os.Stderr, "regolith runs Mixture-of-Experts GGUF models whose experts stream from disk.\n\nUsage: regolith COMMAND [flags]\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(os.Stderr, "\nRun 'regolith COMMAND --help' for a command's flags.\n")
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	for _, c := range commands {
		if c.name == os.Args[1] {
			if err := c.run(os.Args[2:]); err != nil {
				fmt.Fprintf(os.Stderr, "regolith %s: %v\n", c.name, err)
				os.Exit(1)
			}
			return
		}
	}
	fmt.Fprintf(os.Stderr, "regolith: unknown command %q\n\n", os.Args[1])
	usage()
	os.Exit(2)
}
