//go:build !linux

package cli

import "io"

// isTerminal is false off Linux: the console stays plain lines.
func isTerminal(io.Writer) bool { return false }
