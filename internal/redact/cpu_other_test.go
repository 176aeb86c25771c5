//go:build !unix

package redact

import "time"

var processStart = time.Now()

// cpuTime falls back to wall time where getrusage is not available.
func cpuTime() time.Duration { return time.Since(processStart) }
