package pipeline_test

import (
	"testing"

	"github.com/fixrail/fixrail/internal/pipeline"
)

// prepared is the setup of the repository at dir, closed when t ends, and
// its outbox directory, where the local forge writes a run's PR bundle.
func prepared(t *testing.T, dir string) (*pipeline.Setup, string) {
	t.Helper()
	s, err := pipeline.Prepare(t.Context(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	outbox, err := s.StateDir("outbox")
	if err != nil {
		t.Fatal(err)
	}
	return s, outbox
}
