package ledger

import (
	"os"
	"testing"

	"github.com/fixrail/fixrail/internal/ledger/pgtest"
)

func TestMain(m *testing.M) {
	if os.Getenv(loopEnv) != "" {
		os.Exit(loopChild())
	}
	if os.Getenv(childEnv) != "" {
		os.Exit(child())
	}
	os.Exit(pgtest.Main(m))
}
