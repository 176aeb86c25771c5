//go:build race

package redact

// raceEnabled: the race detector slows single-goroutine scanning about
// tenfold and finds nothing in it, so hostile shapes run at 100 KB only.
const raceEnabled = true
