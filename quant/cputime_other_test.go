//go:build !linux

package quant

import "time"

// threadCPU is unknown here: benchmarks report wall time only.
func threadCPU() time.Duration { return 0 }
