package model

import (
	"regexp"
	"sort"
	"strconv"

	"github.com/regolith/regolith/gguf"
)

// routedExpert matches the 3-D routed-expert tensors: blk.L.ffn_{gate,up,down}_exps.weight
// (the shared expert is ffn_*_shexp and stays resident).
var routedExpert = regexp.MustCompile(`^blk\.(\d+)\.ffn_(gate|up|down|gate_up)_exps\.weight$`)

// Summary splits a model file's bytes into resident (dense) weights and routed experts.
type Summary struct {
	Arch              string      `json:"arch"`
	TotalBytes        int64       `json:"total_tensor_bytes"`
	DenseBytes        int64       `json:"dense_bytes"`
	ExpertBytes       int64       `json:"routed_expert_bytes"`
	ExpertsPerLayer   int         `json:"experts_per_layer"`
	ExpertLayers      []LayerSize `json:"expert_layers"`
	TotalExperts      int         `json:"total_experts"`
	LargestExpertSize int64       `json:"largest_expert_bytes"`
}

// LayerSize is the byte size of one routed expert (gate + up + down) of a layer.
type LayerSize struct {
	Layer       int   `json:"layer"`
	Experts     int   `json:"experts"`
	BytesPerExp int64 `json:"bytes_per_expert"`
}

// Summarize computes the split for any GGUF file (any architecture whose experts follow
// llama.cpp's ffn_*_exps naming).
func Summarize(f *gguf.File) Summary {
	s := Summary{Arch: f.Arch()}
	layers := map[int]*LayerSize{}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		s.TotalBytes += int64(t.Size)
		m := routedExpert.FindStringSubmatch(t.Name)
		if m == nil || len(t.Dims) != 3 || t.Dims[2] == 0 {
			s.DenseBytes += int64(t.Size)
			continue
		}
		s.ExpertBytes += int64(t.Size)
		l, _ := strconv.Atoi(m[1])
		ls := layers[l]
		if ls == nil {
			ls = &LayerSize{Layer: l, Experts: int(t.Dims[2])}
			layers[l] = ls
		}
		ls.BytesPerExp += int64(t.Size / t.Dims[2])
	}
	for _, ls := range layers {
		s.ExpertLayers = append(s.ExpertLayers, *ls)
		s.TotalExperts += ls.Experts
		s.ExpertsPerLayer = max(s.ExpertsPerLayer, ls.Experts)
		s.LargestExpertSize = max(s.LargestExpertSize, ls.BytesPerExp)
	}
	sort.Slice(s.ExpertLayers, func(a, b int) bool { return s.ExpertLayers[a].Layer < s.ExpertLayers[b].Layer })
	return s
}

// ExpertsThatFit is how many routed experts fit in an arena of the given bytes (filling
// the smallest experts first, which is exact for the usual one size per model).
func (s Summary) ExpertsThatFit(arena int64) int {
	var sizes []int64
	for _, ls := range s.ExpertLayers {
		for i := 0; i < ls.Experts; i++ {
			sizes = append(sizes, ls.BytesPerExp)
		}
	}
	sort.Slice(sizes, func(a, b int) bool { return sizes[a] < sizes[b] })
	n := 0
	for _, b := range sizes {
		if arena < b {
			break
		}
		arena -= b
		n++
	}
	return n
}
