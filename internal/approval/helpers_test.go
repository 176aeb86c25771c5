package approval

import (
	"encoding/json"
	"testing"
	"time"
)

// t0 is the fixed "now" of the tests.
var t0 = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// testRequest is a gated `git push --force` as a hook would record it.
func testRequest(t *testing.T) *Request {
	t.Helper()
	r, err := NewRequest("Bash", json.RawMessage(`{"command":"git push --force origin main","timeout":120000}`),
		"/home/dev/repo", "push-force", 15*time.Minute, t0)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
