//go:build unix

package findings

import (
	"syscall"

	"github.com/fixrail/fixrail/internal/pathguard"
)

func mkfifo(p string) error { return syscall.Mkfifo(p, 0o600) }

// PathSafeID is pathguard.SafeName, for the fuzz test.
func PathSafeID(s string) bool { return pathguard.SafeName(s) }
