// Command doccomments extracts the documentation comments (package, declaration and field
// comments) from a NUL-separated shard of Go source files (as tools/corpus writes them) and
// writes them as a NUL-separated shard of prose documents, one per source file, with the
// comment markers removed: the prose-like corpus of docs/quality.md.
//
//	go run ./tools/doccomments -in .train/heldout.txt.gz -out /tmp/heldout-doc.txt.gz
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log"
	"os"
	"strings"
)

func main() {
	in := flag.String("in", "", "NUL-separated shard of Go files (.gz or plain)")
	out := flag.String("out", "", "output shard (gzipped if the name ends in .gz)")
	minBytes := flag.Int("min-bytes", 200, "leave out files whose comments add up to fewer bytes")
	flag.Parse()
	if *in == "" || *out == "" {
		log.Fatal("pass -in and -out")
	}
	b, err := readAll(*in)
	if err != nil {
		log.Fatal(err)
	}
	var docs [][]byte
	for _, src := range bytes.Split(b, []byte{0}) {
		if d := extract(src); len(d) >= *minBytes {
			docs = append(docs, d)
		}
	}
	var w io.Writer
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	w = f
	var z *gzip.Writer
	if strings.HasSuffix(*out, ".gz") {
		z = gzip.NewWriter(f)
		w = z
	}
	n := 0
	for i, d := range docs {
		if i > 0 {
			w.Write([]byte{0})
		}
		w.Write(d)
		n += len(d)
	}
	if z != nil {
		if err := z.Close(); err != nil {
			log.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "%d documents, %d bytes of doc comments\n", len(docs), n)
}

func readAll(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		r = z
	}
	return io.ReadAll(r)
}

// extract returns the text of a file's doc comments, paragraphs separated by blank lines.
func extract(src []byte) []byte {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments)
	if err != nil {
		return nil
	}
	var buf bytes.Buffer
	add := func(g *ast.CommentGroup) {
		if g == nil {
			return
		}
		t := strings.TrimSpace(g.Text())
		if t == "" || strings.HasPrefix(t, "Copyright") {
			return
		}
		buf.WriteString(t)
		buf.WriteString("\n\n")
	}
	add(f.Doc)
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncDecl:
			add(x.Doc)
		case *ast.GenDecl:
			add(x.Doc)
		case *ast.TypeSpec:
			add(x.Doc)
		case *ast.ValueSpec:
			add(x.Doc)
		case *ast.Field:
			add(x.Doc)
		}
		return true
	})
	return buf.Bytes()
}
