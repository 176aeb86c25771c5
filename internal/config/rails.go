package config

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fixrail/fixrail/internal/sandbox/egress"
)

// Rails are the values of a configuration that bound what an unattended
// fix may do: where it may write, what is sensitive, and what it may
// spend. The ledger keeps them per repository at each run's start, so a
// fixrail.yaml that loosened them since the last run is reported (doctor,
// scan, the run's own note): the owners see their rails change.
type Rails struct {
	Fixable   []string `json:"fixable"`
	TestGlob  string   `json:"test_path_glob"`
	Sensitive []string `json:"sensitive"`
	// Egress is runner.egress as written: absent (the runner kind's model
	// API) is empty.
	Egress []string `json:"egress,omitempty"`
	// Budget is every cap by its key in fixrail.yaml (durations in
	// seconds): a higher value is a looser rail.
	Budget map[string]float64 `json:"budget"`
}

// Rails returns the configuration's rails, defaults applied.
func (c *Config) Rails() Rails {
	b := c.Budget
	return Rails{
		Fixable:   slices.Clone(c.Paths.Fixable),
		TestGlob:  c.Test.PathGlob,
		Sensitive: slices.Clone(c.Paths.Sensitive),
		Egress:    slices.Clone(c.Runner.Egress),
		Budget: map[string]float64{
			"runner.egress_max_bytes":       float64(cmp.Or(c.Runner.EgressMaxBytes, egress.DefaultMaxBytes)),
			"runner.egress_max_connections": float64(cmp.Or(c.Runner.EgressMaxConnections, egress.DefaultMaxConns)),
			"budget.max_diff_lines":         float64(b.MaxDiffLines),
			"budget.wall_clock":             b.WallClock.Seconds(),
			"budget.run_cost_usd":           b.RunCostUSD,
			"budget.day.cost_usd":           b.Day.CostUSD,
			"budget.day.runs":               float64(b.Day.Runs),
			"budget.day.turns":              float64(b.Day.Turns),
			"budget.repo_day.cost_usd":      b.RepoDay.CostUSD,
			"budget.repo_day.runs":          float64(b.RepoDay.Runs),
			"budget.repo_day.turns":         float64(b.RepoDay.Turns),
			"budget.actor_day.cost_usd":     b.ActorDay.CostUSD,
			"budget.actor_day.runs":         float64(b.ActorDay.Runs),
			"budget.actor_day.turns":        float64(b.ActorDay.Turns),
			"budget.concurrent.global":      float64(b.Concurrent.Global),
			"budget.concurrent.repo":        float64(b.Concurrent.Repo),
			"runner.max_turns":              float64(c.Runner.MaxTurns),
			"recheck.max_retries":           float64(c.Recheck.Retries()),
		},
	}
}

// Loosened lists, one sentence each, how now loosens the rails of prev:
// a glob added to paths.fixable or a changed test.path_glob (where a fix
// or its evidence may write), a glob removed from paths.sensitive, a cap
// raised. Globs are compared as strings: an added glob counts as a
// widening even when an old one already covered it, because deciding
// that would need glob containment. Tightenings are not listed.
func (prev Rails) Loosened(now Rails) []string {
	var out []string
	if added := missing(now.Fixable, prev.Fixable); len(added) > 0 {
		out = append(out, "paths.fixable widened: added "+quoted(added))
	}
	if now.TestGlob != prev.TestGlob {
		out = append(out, fmt.Sprintf("test.path_glob changed from %q to %q (the test phase's writes count as fixable)", prev.TestGlob, now.TestGlob))
	}
	if added := missing(now.Egress, prev.Egress); len(added) > 0 {
		out = append(out, "runner.egress widened: added "+quoted(added)+" (where the agent may send data)")
	}
	if removed := missing(prev.Sensitive, now.Sensitive); len(removed) > 0 {
		out = append(out, "paths.sensitive shrank: removed "+quoted(removed))
	}
	keys := make([]string, 0, len(now.Budget))
	for k := range now.Budget {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		was, ok := prev.Budget[k]
		if v := now.Budget[k]; ok && v > was {
			out = append(out, fmt.Sprintf("%s raised from %s to %s", k, num(was), num(v)))
		}
	}
	return out
}

// missing is what a holds that b does not, in a's order.
func missing(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func quoted(v []string) string {
	q := make([]string, len(v))
	for i, s := range v {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
