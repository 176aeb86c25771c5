package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/fixrail/fixrail/internal/config"
	"github.com/fixrail/fixrail/internal/ledger"
)

// recordRails keeps, in the ledger, the configuration this run started
// with, and notes how it loosened the rails since the repository's last
// run. A loosening is posture for the owners, not a rail: the run goes on
// (SPEC: doctor and scan report it), and a record that fails is a warning.
func (r *run) recordRails(ctx context.Context) {
	rails, err := json.Marshal(r.cfg.Rails())
	if err == nil {
		var prev *ledger.RailsRecord
		if prev, err = r.res.RecordRails(ctx, r.s.ConfigSHA256, rails, time.Now()); err == nil && prev != nil && prev.SHA256 != r.s.ConfigSHA256 {
			var loosened []string
			if loosened, err = loosenedSince(*prev, r.cfg); err == nil && len(loosened) > 0 {
				r.rep.RailsLoosened = loosened
				r.note("rails-loosened", fmt.Sprintf("%s on %s loosened the rails since run %s (%s): %s",
					config.FileName, r.s.Base, prev.RunID, prev.Recorded.Format(time.RFC3339), strings.Join(loosened, "; ")))
			}
		}
	}
	if err != nil {
		r.rep.Warnings = append(r.rep.Warnings, "the rails this run started with were not recorded or compared: "+err.Error())
	}
}

func loosenedSince(prev ledger.RailsRecord, now *config.Config) ([]string, error) {
	var was config.Rails
	if err := json.Unmarshal(prev.Rails, &was); err != nil {
		return nil, fmt.Errorf("the ledger's rail record of run %s: %w", prev.RunID, err)
	}
	return was.Loosened(now.Rails()), nil
}

// RailsPosture compares the base's fixrail.yaml with the rails the ledger
// recorded for repo, for doctor and scan. loosened lists how the rails
// were loosened: since the last run when the base changed after it, or by
// the last change, which a run already started with. since says what it
// is compared with; it is empty when no run was recorded.
func (s *Setup) RailsPosture(ctx context.Context, lg ledger.Ledger, repo string) (since string, loosened []string, err error) {
	hist, err := lg.Rails(ctx, repo, 2)
	if err != nil || len(hist) == 0 {
		return "", nil, err
	}
	prev := hist[0]
	since = fmt.Sprintf("since run %s (%s)", prev.RunID, prev.Recorded.Format(time.RFC3339))
	if prev.SHA256 == s.ConfigSHA256 {
		if len(hist) == 1 {
			return since, nil, nil // the only configuration any run used
		}
		// Runs already use it: what its change did is still the owners'
		// to see.
		since = fmt.Sprintf("by its last change, first run by %s (%s)", prev.RunID, prev.Recorded.Format(time.RFC3339))
		prev = hist[1]
	}
	loosened, err = loosenedSince(prev, s.Config)
	return since, loosened, err
}
