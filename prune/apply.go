package prune

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"

	"github.com/regolith/regolith/gguf"
)

// expertTensor matches the per-layer tensors whose outermost dimension is the expert index:
// the expert stacks, the router (one row per expert) and a router bias.
var expertTensor = regexp.MustCompile(`^blk\.(\d+)\.(ffn_gate_exps|ffn_up_exps|ffn_down_exps|ffn_gate_up_exps|ffn_gate_inp|exp_probs_b)\.(weight|bias)$`)

// Apply writes f pruned to the kept experts of every layer (keep[l]: ascending original
// ids, the same count in every layer) to w: the expert stacks keep only the kept experts'
// slices and the router only their rows, in ascending original id, so that kept expert i of
// layer l becomes expert i; {arch}.expert_count becomes the kept count and
// {arch}.expert_used_count at most that. Every other tensor and metadata value is written
// unchanged, in the same order.
func Apply(f *gguf.File, keep [][]int, w io.Writer) error {
	arch := f.Arch()
	n, ok := f.ArchUint("expert_count")
	if !ok || n == 0 {
		return fmt.Errorf("prune: %s has no %s.expert_count", arch, arch)
	}
	nExpert := int(n)
	nLayer, ok := f.ArchUint("block_count")
	if !ok || int(nLayer) != len(keep) {
		return fmt.Errorf("prune: keep-map of %d layers for a model of %d", len(keep), nLayer)
	}
	K := len(keep[0])
	for l, ids := range keep {
		if len(ids) != K {
			return fmt.Errorf("prune: layer %d keeps %d experts, layer 0 %d (GGUF has one expert count)", l, len(ids), K)
		}
		for i, e := range ids {
			if e < 0 || e >= nExpert || (i > 0 && e <= ids[i-1]) {
				return fmt.Errorf("prune: layer %d: kept ids must be ascending and below %d: %v", l, nExpert, ids)
			}
		}
	}
	if K == 0 {
		return fmt.Errorf("prune: no expert kept")
	}
	kvs := make([]gguf.KV, len(f.KV))
	copy(kvs, f.KV)
	found := 0
	for i := range kvs {
		switch kvs[i].Key {
		case arch + ".expert_count":
			v, err := sameType(kvs[i], uint64(K))
			if err != nil {
				return err
			}
			kvs[i].Value = v
			found++
		case arch + ".expert_used_count":
			used, _ := f.ArchUint("expert_used_count")
			v, err := sameType(kvs[i], min(used, uint64(K)))
			if err != nil {
				return err
			}
			kvs[i].Value = v
		}
	}
	if found != 1 {
		return fmt.Errorf("prune: %s.expert_count appears %d times", arch, found)
	}
	ts := make([]gguf.WriteTensor, len(f.Tensors))
	sliced := 0
	for i := range f.Tensors {
		t := &f.Tensors[i]
		data := f.Data(t)
		ts[i] = gguf.WriteTensor{Name: t.Name, Type: t.Type, Dims: t.Dims, Data: data}
		m := expertTensor.FindStringSubmatch(t.Name)
		if m == nil {
			continue
		}
		l, _ := strconv.Atoi(m[1])
		last := len(t.Dims) - 1
		if l >= len(keep) || last < 0 || t.Dims[last] != uint64(nExpert) {
			return fmt.Errorf("prune: tensor %s %v: outermost dimension is not the %d experts", t.Name, t.Dims, nExpert)
		}
		per := len(data) / nExpert
		if per*nExpert != len(data) {
			return fmt.Errorf("prune: tensor %s: %d bytes do not split into %d experts", t.Name, len(data), nExpert)
		}
		out := make([]byte, 0, per*K)
		for _, e := range keep[l] {
			out = append(out, data[e*per:(e+1)*per]...)
		}
		dims := append([]uint64(nil), t.Dims...)
		dims[last] = uint64(K)
		ts[i].Dims, ts[i].Data = dims, out
		sliced++
	}
	if sliced == 0 {
		return fmt.Errorf("prune: no expert tensors found")
	}
	return gguf.Write(w, kvs, ts)
}

// sameType returns v as the Go type of kv's value.
func sameType(kv gguf.KV, v uint64) (any, error) {
	switch kv.Value.(type) {
	case uint32:
		return uint32(v), nil
	case int32:
		return int32(v), nil
	case uint64:
		return v, nil
	case int64:
		return int64(v), nil
	case uint16:
		return uint16(v), nil
	case int16:
		return int16(v), nil
	case uint8:
		return uint8(v), nil
	case int8:
		return int8(v), nil
	}
	return nil, fmt.Errorf("prune: %s is a %T", kv.Key, kv.Value)
}

// ApplyFile writes the pruned model to path (through a temporary file renamed at the end).
func ApplyFile(f *gguf.File, keep [][]int, path string) error {
	tmp, err := os.CreateTemp(dirOf(path), ".prune-*.gguf")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := Apply(f, keep, tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func dirOf(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if os.IsPathSeparator(p[i]) {
			return p[:i+1]
		}
	}
	return "."
}

// KeepMap is the keep-map file: per layer the kept original expert ids (the format
// `regolith trace replay --keep` reads), with how it was chosen.
type KeepMap struct {
	Layers  [][]int `json:"layers"`
	Model   string  `json:"model,omitempty"`
	Score   string  `json:"score,omitempty"`
	Keep    int     `json:"keep"`
	NExpert int     `json:"n_expert,omitempty"`
}

// WriteKeepMap writes a keep-map file.
func WriteKeepMap(path string, k KeepMap) error {
	b, err := json.Marshal(k)
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadKeepMap reads a keep-map file ({"layers": …} or a bare array of per-layer id lists).
func ReadKeepMap(path string) (*KeepMap, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var k KeepMap
	if err := json.Unmarshal(b, &k.Layers); err != nil {
		if err2 := json.Unmarshal(b, &k); err2 != nil || k.Layers == nil {
			return nil, fmt.Errorf("%s: keep-map is not JSON of per-layer expert ids: %v", path, err)
		}
	}
	if len(k.Layers) > 0 {
		k.Keep = len(k.Layers[0])
	}
	return &k, nil
}
