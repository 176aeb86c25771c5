package pipeline

import (
	"os"
	"testing"

	"github.com/fixrail/fixrail/internal/sandbox/egress"
)

func TestMain(m *testing.M) {
	// A sandboxed agent runs behind this binary as its egress forwarder.
	egress.MaybeForward()
	os.Exit(m.Run())
}
