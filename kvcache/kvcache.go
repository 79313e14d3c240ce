// Package kvcache holds the attention key/value cache. Keys and values are stored as
// IEEE half floats, as llama.cpp's default F16 cache stores them, so that attention sees
// the same rounded values.
package kvcache

import "fmt"

// Cache is a per-layer K and V store of Ctx positions × Dim halves each.
type Cache struct {
	Layers, Ctx, Dim int
	K, V             [][]uint16 // [layer][pos*Dim + i]
	N                int        // positions filled
	Rec              *Recurrent // a hybrid model's recurrent state (recurrent.go), or nil
}

// New allocates a cache; it refuses sizes that overflow or exceed maxBytes (0: no limit).
func New(layers, ctx, dim int, maxBytes int64) (*Cache, error) {
	if layers <= 0 || ctx <= 0 || dim <= 0 {
		return nil, fmt.Errorf("kvcache: bad size %d layers × %d positions × %d", layers, ctx, dim)
	}
	bytes := int64(layers) * int64(ctx) * int64(dim) * 4
	if bytes/int64(layers)/int64(ctx) != int64(dim)*4 || (maxBytes > 0 && bytes > maxBytes) {
		return nil, fmt.Errorf("kvcache: %d layers × %d positions × %d dims needs %d bytes, over the limit %d", layers, ctx, dim, bytes, maxBytes)
	}
	c := &Cache{Layers: layers, Ctx: ctx, Dim: dim, K: make([][]uint16, layers), V: make([][]uint16, layers)}
	for l := range c.K {
		c.K[l] = make([]uint16, ctx*dim)
		c.V[l] = make([]uint16, ctx*dim)
	}
	return c, nil
}

// Bytes is the memory the cache holds.
func (c *Cache) Bytes() int64 { return int64(c.Layers) * int64(c.Ctx) * int64(c.Dim) * 4 }

// KRow and VRow are the stored key and value of layer l at position pos.
func (c *Cache) KRow(l, pos int) []uint16 { return c.K[l][pos*c.Dim : (pos+1)*c.Dim] }
func (c *Cache) VRow(l, pos int) []uint16 { return c.V[l][pos*c.Dim : (pos+1)*c.Dim] }

// Truncate forgets positions from n on (to reuse a shared prefix). With a recurrent state
// it goes back further, to the latest checkpoint at or before n (see Recurrent): read N.
func (c *Cache) Truncate(n int) {
	if n < c.N {
		c.N = max(n, 0)
	}
	if c.Rec != nil {
		c.N = c.Rec.rollback(c.N)
	}
}
