package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/tokenizer"
)

func init() {
	commands = append(commands, command{"tokenize", "tokenize text with a GGUF file's vocabulary, like llama-tokenize", runTokenize})
}

func runTokenize(args []string) error { return tokenizeCmd(args, os.Stdin, os.Stdout) }

// tokenizeCmd is `regolith tokenize` reading --stdin from in and printing to out.
func tokenizeCmd(args []string, in io.Reader, out io.Writer) error {
	fs := newFlags("tokenize", "-m FILE.gguf (-p TEXT | -f FILE | --stdin) [flags]",
		"Tokenizes text with the vocabulary of a GGUF file (a model or a vocabulary-only file) and\n"+
			"prints one token per line as `id -> 'piece'`, as llama.cpp's llama-tokenize does, or\n"+
			"with --ids a JSON list of the ids. Special tokens written in the text (e.g. <|im_start|>)\n"+
			"are parsed, and BOS/EOS are added when the vocabulary asks for them, unless told otherwise.\n"+
			"Escapes (\\n \\r \\t \\' \\\" \\\\ \\xHH) in the text are processed as llama-tokenize does.")
	var model, prompt, file string
	fs.StringVar(&model, "m", "", "GGUF `FILE` whose tokenizer.* metadata is used (alias --model)")
	fs.StringVar(&model, "model", "", "same as -m `FILE`")
	fs.StringVar(&prompt, "p", "", "`TEXT` to tokenize (alias --prompt)")
	fs.StringVar(&prompt, "prompt", "", "same as -p `TEXT`")
	fs.StringVar(&file, "f", "", "read the text from `FILE` (escapes processed too, as llama-tokenize does; alias --file)")
	fs.StringVar(&file, "file", "", "same as -f `FILE`")
	stdin := fs.Bool("stdin", false, "read the text from standard input (takes precedence over -p and -f)")
	idsOnly := fs.Bool("ids", false, "print only the ids, as a JSON list like [1, 2, 3]")
	noBOS := fs.Bool("no-bos", false, "do not add BOS/EOS even if the vocabulary asks for them")
	noParse := fs.Bool("no-parse-special", false, "tokenize special-token texts as plain text (user-defined tokens still match)")
	noEscape := fs.Bool("no-escape", false, "take the text literally: do not process \\n, \\t, \\xHH ... escapes")
	showCount := fs.Bool("show-count", false, "print the number of tokens at the end")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return fmt.Errorf("unexpected arguments %q (give the text with -p, -f or --stdin)", fs.Args())
	}
	if model == "" {
		fs.Usage()
		return fmt.Errorf("missing -m FILE.gguf")
	}
	var text string
	switch {
	case *stdin:
		b, err := io.ReadAll(in)
		if err != nil {
			return fmt.Errorf("reading standard input: %w", err)
		}
		text = string(b)
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		text = string(b)
	case prompt != "":
		text = prompt
	default:
		fs.Usage()
		return fmt.Errorf("give the text with -p TEXT, -f FILE or --stdin")
	}
	if !*noEscape {
		text = processEscapes(text)
	}

	f, err := gguf.Open(model)
	if err != nil {
		return err
	}
	defer f.Close()
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		return err
	}
	// As llama-tokenize: add_special follows the vocabulary's add_bos_token, unless --no-bos.
	addSpecial := tok.AddBOS() && !*noBOS
	ids := tok.Encode(text, addSpecial, !*noParse)

	w := bufio.NewWriter(out)
	if *idsOnly {
		w.WriteByte('[')
		for i, id := range ids {
			if i > 0 {
				w.WriteString(", ")
			}
			w.WriteString(strconv.Itoa(int(id)))
		}
		w.WriteString("]\n")
	} else {
		for _, id := range ids {
			fmt.Fprintf(w, "%6d -> '%s'\n", id, tok.Piece(id))
		}
	}
	if *showCount {
		fmt.Fprintf(w, "Total number of tokens: %d\n", len(ids))
	}
	return w.Flush()
}

// processEscapes interprets \n, \r, \t, \', \", \\ and \xHH as llama.cpp's
// string_process_escapes does; any other backslash sequence is kept as written.
func processEscapes(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b = append(b, s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case '\'', '"', '\\':
			b = append(b, c)
		case 'x':
			if i+2 < len(s) {
				if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
					b = append(b, byte(v))
					i += 2
					break
				}
			}
			b = append(b, '\\', c)
		default:
			b = append(b, '\\', c)
		}
	}
	return string(b)
}
