//go:build !unix

package docindex

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
