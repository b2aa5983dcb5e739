//go:build !linux

package replay

import "time"

// processCPU is not measured here; benchmarks then report 0 cpu-s/op.
func processCPU() time.Duration { return 0 }
