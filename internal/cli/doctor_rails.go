package cli

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/ledger"
	"github.com/fixrail/fixrail/internal/pipeline"
)

// railsCheck is doctor's posture check of the rails: how fixrail.yaml on
// the base loosened them — paths.fixable widened, paths.sensitive shrunk,
// a cap raised — against what the ledger recorded at the repository's
// runs. A loosening is a warning for the owners, never a failure: the
// owners may mean it, and a run is not stopped by it. It reads the ledger
// and creates none: a SQLite ledger that does not exist yet means no run
// was recorded.
func railsCheck(ctx context.Context, setup *pipeline.Setup, repo string) check {
	const name = "rails"
	stateDir := filepath.Join(setup.Repo.Top(), pipeline.StateDirName)
	if p := sqlitePath(setup.Config.Ledger.URL, stateDir); p != "" {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return check{name, "ok", "no run recorded yet (no ledger at " + p + "): nothing to compare " + config.FileName + " with"}
		}
	}
	lg, err := ledger.OpenConfig(ctx, setup.Config, stateDir)
	if err != nil {
		return check{name, "warn", "the ledger could not be read to compare " + config.FileName + " with the last run's: " + err.Error()}
	}
	defer lg.Close()
	since, loosened, err := setup.RailsPosture(ctx, lg, repo)
	switch {
	case err != nil:
		return check{name, "warn", "the rails could not be compared with the last run's: " + err.Error()}
	case since == "":
		return check{name, "ok", "no run recorded for " + repo + " yet: nothing to compare " + config.FileName + " with"}
	case len(loosened) > 0:
		return check{name, "warn", config.FileName + " on " + setup.Base + " loosened the rails " + since + ": " + strings.Join(loosened, "; ")}
	}
	return check{name, "ok", config.FileName + " on " + setup.Base + " loosened no rail " + since}
}

// sqlitePath is the SQLite ledger file ledger.url names, or "" for
// Postgres (mirrors ledger.Open's resolution).
func sqlitePath(url, stateDir string) string {
	if strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://") {
		return ""
	}
	p := strings.TrimPrefix(url, "sqlite://")
	if p == "" {
		p = ledger.DefaultFile
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(stateDir, p)
	}
	return p
}
