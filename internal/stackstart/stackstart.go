// Package stackstart grows the main goroutine's stack once, before any
// other package initialises, for short-lived binaries (fixrail-hook, which
// an agent CLI starts on every tool call). Import it for its effect only.
//
// Why: the main goroutine starts on a 2 KiB stack. A hook call grew it three
// times (to 4, 8 and 16 KiB; a long shell command to 32 KiB), and each growth
// copies the stack and walks every frame on it, reading the binary's
// function tables for the first time: page faults in a process that lives
// for two milliseconds. One growth here, while the stack is two frames deep,
// costs one short copy. scripts/bench-hook measures the hook with it.
//
// It must import nothing: the Go specification initialises, in each step,
// the first package by import path whose imports are all initialised, so a
// package with no imports under github.com/ is ready from the first step and
// runs right after the runtime's own packages and the few leaves that sort
// before it — before os, regexp, unicode, the crypto packages, the shell
// parser and the rest that the hook links (TestInitializedFirst in
// cmd/fixrail-hook reads the order from the binary's inittrace).
package stackstart

func init() { grow() }

// frame is sized so that the runtime moves the stack to 32 KiB: room for
// the deepest hook call measured, a nested shell command with a denial.
const frame = 24 << 10

//go:noinline
func grow() {
	var b [frame]byte
	touch(b[:])
}

// touch keeps b (and so the frame) from being optimised away.
//
//go:noinline
func touch(b []byte) { b[0]++ }
