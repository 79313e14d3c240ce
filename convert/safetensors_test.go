package convert

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"strings"
	"testing"
)

func stFile(header string, data int) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	b = append(b, header...)
	return append(b, make([]byte, data)...)
}

func TestSafetensorsBad(t *testing.T) {
	for _, c := range []struct{ name, hdr string }{
		{"not object", `[1]`},
		{"unknown dtype", `{"a":{"dtype":"Q9","shape":[1],"data_offsets":[0,1]}}`},
		{"offsets past end", `{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}`},
		{"size mismatch", `{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`},
		{"negative dim", `{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`},
		{"overflow", `{"a":{"dtype":"F32","shape":[4294967296,4294967296,4],"data_offsets":[0,8]}}`},
		{"too many dims", `{"a":{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[0,4]}}`},
		{"offsets reversed", `{"a":{"dtype":"U8","shape":[0],"data_offsets":[4,0]}}`},
		{"overlap", `{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}}`},
		{"duplicate", `{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`},
		{"trailing", `{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}} {}`},
		{"three offsets", `{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}}`},
	} {
		b := stFile(c.hdr, 8)
		if _, err := ReadSafetensors(bytes.NewReader(b), int64(len(b))); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
	ok := stFile(`{"__metadata__":{"format":"pt"},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}  `, 8)
	s, err := ReadSafetensors(bytes.NewReader(ok), int64(len(ok)))
	if err != nil {
		t.Fatal(err)
	}
	if s.Tensors[0].Name != "a" || s.Metadata["format"] != "pt" {
		t.Errorf("tensors %+v metadata %v", s.Tensors, s.Metadata)
	}
}

// TestSafetensorsHostileLength: a header length of terabytes in a tiny file is refused
// before anything is allocated for it.
func TestSafetensorsHostileLength(t *testing.T) {
	for _, n := range []uint64{1 << 40, MaxHeaderBytes + 1, 1<<64 - 1, 90 << 20} {
		b := binary.LittleEndian.AppendUint64(nil, n)
		b = append(b, `{}`...)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := ReadSafetensors(bytes.NewReader(b), int64(len(b)))
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "header of") {
			t.Errorf("length %d: err %v", n, err)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
			t.Errorf("length %d: allocated %d bytes", n, d)
		}
	}
	// a 100 MB claimed file (ReaderAt that is not backed) with a huge shape list is refused
	// by the rank check, not decoded
	long := `{"a":{"dtype":"U8","shape":[` + strings.Repeat("1,", 100000) + `1],"data_offsets":[0,1]}}`
	b := stFile(long, 1)
	if _, err := ReadSafetensors(bytes.NewReader(b), int64(len(b))); err == nil {
		t.Error("100001-dim shape accepted")
	}
}

func FuzzSafetensors(f *testing.F) {
	f.Add(safetensorsBytes([]stTensor{{name: "x", dtype: "BF16", shape: []int{2, 3}, vals: make([]float32, 6)},
		{name: "y", dtype: "F32", shape: []int{1}, vals: []float32{1}}}))
	f.Add(stFile(`{"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}}`, 4))
	f.Add(stFile(`{"a":{"dtype":"F64","shape":[],"data_offsets":[0,8]}}`, 8))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, '{', '}'})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ReadSafetensors(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		var total int64
		for i := range s.Tensors {
			tt := &s.Tensors[i]
			if tt.End > int64(len(b)) || tt.Begin > tt.End {
				t.Fatalf("%s: range [%d, %d) in %d bytes", tt.Name, tt.Begin, tt.End, len(b))
			}
			total += tt.End - tt.Begin
			raw, err := s.Raw(tt, 0, tt.Elements())
			if err != nil || int64(len(raw)) != tt.End-tt.Begin {
				t.Fatalf("%s: Raw: %d bytes, %v", tt.Name, len(raw), err)
			}
			if _, err := s.Float32(tt, 0, tt.Elements()); err != nil && (tt.DType == "F32" || tt.DType == "BF16") {
				t.Fatalf("%s: Float32: %v", tt.Name, err)
			}
		}
		if total > int64(len(b)) {
			t.Fatalf("tensors cover %d bytes of a %d-byte file", total, len(b))
		}
	})
}
