// Command expertquant writes a copy of a GGUF whose routed-expert tensors (blk.N.ffn_gate_exps,
// ffn_up_exps, ffn_down_exps) have another quantization, every other tensor and all metadata
// unchanged: an experts-only quantized model for docs/quality.md (regolith convert -type q4_k
// quantizes attention too).
//
// Two ways to get the experts:
//
//	# take them from another GGUF of the same model (e.g. convert -type q4_k of the bf16 checkpoint)
//	go run ./tools/expertquant -in gomoe-q8_0.gguf -experts-from gomoe-q4_k.gguf -o gomoe-q8_0-xq4_k.gguf
//	# or requantize them: dequantize each row, quantize it with ggml's reference quantizer
//	go run ./tools/expertquant -in gomoe-q8_0.gguf -type q4_k -o gomoe-q8_0-rq4_k.gguf
//
// With -type, a tensor whose rows are not a whole number of the new type's blocks (gomoe's
// ffn_down_exps rows are 64 wide, Q4_K blocks 256) keeps its type, as convert does.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"regexp"

	"github.com/regolith/regolith/gguf"
	"github.com/regolith/regolith/quant"
)

var expertTensor = regexp.MustCompile(`^blk\.\d+\.ffn_(gate|up|down)_exps\.weight$`)

func main() {
	in := flag.String("in", "", "input GGUF")
	out := flag.String("o", "", "output GGUF")
	from := flag.String("experts-from", "", "take the expert tensors from this GGUF (same names and shapes)")
	typ := flag.String("type", "", "requantize the expert tensors to this type (e.g. q4_k)")
	flag.Parse()
	if *in == "" || *out == "" || (*from == "") == (*typ == "") {
		log.Fatal("pass -in, -o and exactly one of -experts-from and -type")
	}
	f, err := gguf.Open(*in)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	var src *gguf.File
	var to quant.Type
	if *from != "" {
		if src, err = gguf.Open(*from); err != nil {
			log.Fatal(err)
		}
		defer src.Close()
	} else if to, err = quant.ParseType(*typ); err != nil {
		log.Fatal(err)
	}
	ts := make([]gguf.WriteTensor, len(f.Tensors))
	changed := 0
	for i := range f.Tensors {
		t := &f.Tensors[i]
		ts[i] = gguf.WriteTensor{Name: t.Name, Type: t.Type, Dims: t.Dims, Data: f.Data(t)}
		if !expertTensor.MatchString(t.Name) {
			continue
		}
		var w gguf.WriteTensor
		if src != nil {
			w, err = fromFile(src, t)
		} else {
			w, err = requant(f, t, to)
		}
		if err != nil {
			log.Fatalf("%s: %v", t.Name, err)
		}
		if w.Type != t.Type {
			changed++
		}
		fmt.Fprintf(os.Stderr, "%s: %s -> %s\n", t.Name, t.Type, w.Type)
		ts[i] = w
	}
	o, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	if err := gguf.Write(o, f.KV, ts); err != nil {
		log.Fatal(err)
	}
	if err := o.Close(); err != nil {
		log.Fatal(err)
	}
	fi, _ := os.Stat(*out)
	fmt.Fprintf(os.Stderr, "%d expert tensors changed type; %s: %d bytes\n", changed, *out, fi.Size())
}

func fromFile(src *gguf.File, t *gguf.TensorInfo) (gguf.WriteTensor, error) {
	s, ok := src.Tensor(t.Name)
	if !ok {
		return gguf.WriteTensor{}, fmt.Errorf("not in -experts-from")
	}
	if fmt.Sprint(s.Dims) != fmt.Sprint(t.Dims) {
		return gguf.WriteTensor{}, fmt.Errorf("dims %v in -experts-from, %v here", s.Dims, t.Dims)
	}
	return gguf.WriteTensor{Name: t.Name, Type: s.Type, Dims: t.Dims, Data: src.Data(s)}, nil
}

func requant(f *gguf.File, t *gguf.TensorInfo, to quant.Type) (gguf.WriteTensor, error) {
	w := gguf.WriteTensor{Name: t.Name, Type: t.Type, Dims: t.Dims, Data: f.Data(t)}
	n := int(t.Dims[0])
	if n%to.BlockSize() != 0 || t.Type == to {
		return w, nil
	}
	rows := int(t.Elements()) / n
	inRow, err := t.Type.RowBytes(int64(n))
	if err != nil {
		return w, err
	}
	outRow, err := to.RowBytes(int64(n))
	if err != nil {
		return w, err
	}
	data := f.Data(t)
	buf := make([]byte, int64(rows)*outRow)
	row := make([]float32, n)
	for r := 0; r < rows; r++ {
		if err := quant.DequantizeRow(t.Type, data[int64(r)*inRow:int64(r+1)*inRow], row); err != nil {
			return w, err
		}
		if err := quant.QuantizeRow(to, row, buf[int64(r)*outRow:int64(r+1)*outRow]); err != nil {
			return w, err
		}
	}
	w.Type, w.Data = to, buf
	return w, nil
}
