// Package hookstart prepares the runtime for a short-lived binary
// (fixrail-hook, which an agent CLI starts on every tool call) before any
// other package initialises: one processor, and the main goroutine's stack
// grown once. Import it for its effect only.
//
// One processor: the hook's work is one goroutine from start to exit. With
// a P per core the runtime wakes an idle P, and a thread for it, whenever
// the main goroutine readies another goroutine or leaves for a system call;
// in a process that lives for two milliseconds those wake-ups cost more
// than the change's own stop-the-world, which is cheapest here, before any
// other package has started a goroutine (scripts/bench-hook, paired: an
// allowed call 1.51× → 1.47× a no-op, a denied one 1.91× → 1.84×; the
// same call at the top of main made it slower, 1.62×). A blocked system
// call still hands the P to another thread, so a timer or a second
// goroutine runs as before.
//
// One stack growth: the main goroutine starts on a 2 KiB stack. A hook call
// grew it three times (to 4, 8 and 16 KiB; a long shell command to 32 KiB),
// and each growth copies the stack and walks every frame on it, reading the
// binary's function tables for the first time: page faults. One growth here,
// while the stack is two frames deep, costs one short copy.
//
// It imports only the runtime, so it initialises right after the runtime's
// own packages and the few leaves ready before them: the Go specification
// initialises, in each step, the first package by import path whose imports
// are all initialised — so before os, regexp, unicode, the crypto packages,
// the shell parser and the rest that the hook links (TestInitializedFirst in
// cmd/fixrail-hook reads the order from the binary's inittrace).
package hookstart

import "runtime"

func init() {
	runtime.GOMAXPROCS(1)
	grow()
}

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
