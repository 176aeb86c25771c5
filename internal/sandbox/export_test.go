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

// SetLimits makes the sandbox's process and file-size caps procs and
// fileSize for the rest of the test.
func SetLimits(t testing.TB, procs, fileSize uint64) {
	old := sandboxLimits
	sandboxLimits = limits{procs: procs, fileSize: fileSize}
	t.Cleanup(func() { sandboxLimits = old })
}

// SetProcessCap makes the sandbox's process cap procs for the rest of the
// process (a helper's).
func SetProcessCap(procs uint64) { sandboxLimits.procs = procs }

// SetTmpfsSize bounds each tmpfs a sandbox mounts to n bytes for the rest
// of the test.
func SetTmpfsSize(t testing.TB, n int64) {
	old := tmpfsSize
	tmpfsSize = n
	t.Cleanup(func() { tmpfsSize = old })
}
