package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const tokenizeVocab = "../../tokenizer/testdata/vocab-qwen3-4k.gguf"

func tokenizeOut(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	if err := tokenizeCmd(args, strings.NewReader(stdin), &out); err != nil {
		t.Fatalf("tokenize %q: %v", args, err)
	}
	return out.String()
}

func TestTokenizeCommand(t *testing.T) {
	// Expected ids and output from llama.cpp's llama-tokenize on the same file.
	const chat = `<|im_start|>user\nhi<|im_end|>`
	var got []int32
	if err := json.Unmarshal([]byte(tokenizeOut(t, "", "-m", tokenizeVocab, "-p", chat, "--ids")), &got); err != nil {
		t.Fatal(err)
	}
	if want := []int32{4097, 872, 198, 71, 72, 4098}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("--ids: %v, want %v", got, want)
	}

	out := tokenizeOut(t, "", "--model", tokenizeVocab, "--prompt", chat)
	want := "  4097 -> '<|im_start|>'\n   872 -> 'user'\n   198 -> '\n'\n    71 -> 'h'\n    72 -> 'i'\n  4098 -> '<|im_end|>'\n"
	if out != want {
		t.Errorf("pieces:\n%s\nwant\n%s", out, want)
	}

	// Without special-token parsing the control tokens are spelled out; --no-escape keeps "\n".
	out = tokenizeOut(t, "", "-m", tokenizeVocab, "-p", chat, "--ids", "--no-parse-special", "--no-escape")
	if strings.Contains(out, "4097") || strings.Contains(out, " 198,") || !strings.HasPrefix(out, "[27, 91, 318,") {
		t.Errorf("--no-parse-special --no-escape: %s", out)
	}

	// -f reads the file verbatim, --stdin reads standard input; --show-count counts.
	path := filepath.Join(t.TempDir(), "p.txt")
	if err := os.WriteFile(path, []byte("Hello world"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := tokenizeOut(t, "", "-m", tokenizeVocab, "-f", path, "--ids", "--no-bos"); out != "[39, 301, 385, 1879]\n" {
		t.Errorf("-f: %q", out)
	}
	if out := tokenizeOut(t, "Hello world", "-m", tokenizeVocab, "--stdin", "--ids", "--show-count"); out != "[39, 301, 385, 1879]\nTotal number of tokens: 4\n" {
		t.Errorf("--stdin: %q", out)
	}

	// Errors: no model, no text, unknown file.
	for _, args := range [][]string{{"-p", "x"}, {"-m", tokenizeVocab}, {"-m", "no/such.gguf", "-p", "x"}} {
		if err := tokenizeCmd(args, strings.NewReader(""), &bytes.Buffer{}); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

func TestProcessEscapes(t *testing.T) {
	for in, want := range map[string]string{
		`a\nb\tc\rd`: "a\nb\tc\rd", `\'\"\\`: `'"\`, `\x41\x4a!`: "AJ!", `\xZZ`: `\xZZ`, `\q`: `\q`, `end\`: `end\`, `\x4`: `\x4`,
	} {
		if got := processEscapes(in); got != want {
			t.Errorf("processEscapes(%q) = %q, want %q", in, got, want)
		}
	}
}
