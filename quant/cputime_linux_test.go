package quant

import (
	"syscall"
	"time"
)

// threadCPU is the calling thread's CPU time (RUSAGE_THREAD), or 0 where unknown; callers
// lock the goroutine to its thread (runtime.LockOSThread). On a shared machine a kernel's
// speed by CPU time moves much less with other load than by wall time.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(1, &ru) != nil { // RUSAGE_THREAD
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
