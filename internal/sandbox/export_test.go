package sandbox

import "testing"

// SetExecutable makes path fixrail's own binary for the rest of the test.
func SetExecutable(t testing.TB, path string) {
	old := executable
	executable = func() (string, error) { return path, nil }
	t.Cleanup(func() { executable = old })
}

// SetGoStdTargets makes the standard library's build cache hold targets
// (a small part of it) for the rest of the test.
func SetGoStdTargets(t testing.TB, targets ...string) {
	old := goStdTargets
	goStdTargets = targets
	t.Cleanup(func() { goStdTargets = old })
}

// GoStdEnv is goStdEnv, for its table test.
var GoStdEnv = goStdEnv
