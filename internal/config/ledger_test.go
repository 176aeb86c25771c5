package config

import (
	"strings"
	"testing"
	"time"
)

func TestLedgerKeys(t *testing.T) {
	cfg, err := Parse("fixrail.yaml", []byte(valid+`
ledger: {url: "postgres://fixrail@db.internal:5432/fixrail?sslmode=verify-full", lease: 45m}
risk: {labels: [customer-impact], keywords: [ledger], fix_without_write: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Ledger.URL == "" || cfg.LeaseOrDefault() != 45*time.Minute || !cfg.Risk.FixWithoutWrite || cfg.Risk.Labels[0] != "customer-impact" {
		t.Fatalf("ledger keys not read: %+v %+v", cfg.Ledger, cfg.Risk)
	}
	def, err := Parse("fixrail.yaml", []byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	if def.LeaseOrDefault() != 40*time.Minute || def.Budget.RunCostUSD <= 0 || def.Budget.Concurrent.Repo <= 0 {
		t.Fatalf("defaults: lease %s, %+v", def.LeaseOrDefault(), def.Budget)
	}
}

func TestLedgerErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown budget key", valid + "budget_day: {}\n", `unknown key "budget_day"`},
		{"unknown day key", strings.Replace(valid, "wall_clock: 30m}", "wall_clock: 30m, day: {dollars: 3}}", 1), `unknown key "dollars" in budget.day`},
		{"zero is not unlimited", strings.Replace(valid, "wall_clock: 30m}", "wall_clock: 30m, actor_day: {cost_usd: 0}}", 1), "budget.actor_day: cost_usd, runs and turns must all be positive"},
		{"negative run cost", strings.Replace(valid, "wall_clock: 30m}", "wall_clock: 30m, run_cost_usd: -1}", 1), "budget.run_cost_usd must be a positive"},
		{"day below run", strings.Replace(valid, "wall_clock: 30m}", "wall_clock: 30m, run_cost_usd: 120}", 1), "budget.actor_day.cost_usd 100 is below budget.run_cost_usd 120"},
		{"turns below max_turns", strings.Replace(valid, "wall_clock: 30m}", "wall_clock: 30m, repo_day: {cost_usd: 50, runs: 5, turns: 10}}", 1), "budget.repo_day.turns 10 is below runner.max_turns 40"},
		{"no concurrency", strings.Replace(valid, "wall_clock: 30m}", "wall_clock: 30m, concurrent: {repo: 0}}", 1), "budget.concurrent"},
		{"password in url", valid + "ledger: {url: 'postgres://fixrail:hunter2@db/fixrail'}\n", "holds a password"},
		{"password parameter", valid + "ledger: {url: 'postgres://db/fixrail?password=x'}\n", "holds a password parameter"},
		{"other scheme", valid + "ledger: {url: 'mysql://db/fixrail'}\n", "want a path"},
		{"dotdot path", valid + "ledger: {url: '../elsewhere.db'}\n", "without"},
		{"negative lease", valid + "ledger: {lease: -1m}\n", "ledger.lease"},
		{"lease shorter than the wall clock", valid + "ledger: {lease: 10m}\n", "ledger.lease 10m0s must be longer than budget.wall_clock 30m0s"},
		{"empty keyword", valid + "risk: {keywords: ['']}\n", "risk.keywords"},
		{"unknown risk key", valid + "risk: {lower: true}\n", `unknown key "lower" in risk`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("fixrail.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatalf("Parse accepted:\n%s", tc.yaml)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}
