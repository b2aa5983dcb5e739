// Package cputime reads the CPU time this process has used, for benchmarks
// that report CPU per operation next to wall time on a shared machine.
package cputime

import (
	"syscall"
	"time"
)

// Process returns the user and system CPU time of the process so far, all
// threads (garbage collection included); 0 when it cannot be read.
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
