package sandbox

import "testing"

// SetExecutable makes path fixrail's own binary for the rest of the test.
func SetExecutable(t testing.TB, path string) {
	old := executable
	executable = func() (string, error) { return path, nil }
	t.Cleanup(func() { executable = old })
}
