package config

import (
	"slices"
	"strings"
	"testing"
)

// TestRailsLoosened: each way a fixrail.yaml can loosen a rail is listed,
// and tightening, reordering or leaving it alone lists nothing.
func TestRailsLoosened(t *testing.T) {
	const base = "runner: {kind: command, command: [\"x\"]}\ntest: {command: [\"pytest\", \"{test_path}\"], path_glob: \"tests/**\"}\nsuite: {command: [\"pytest\"]}\npaths: {fixable: [\"src/**\", \"lib/**\"], sensitive: [\"src/billing/**\"]}\n"
	for _, tc := range []struct {
		name, now string
		want      []string
	}{
		{"unchanged", base, nil},
		{"reordered and restated defaults", "runner: {kind: command, command: [\"x\"], max_turns: 40}\ntest: {command: [\"pytest\", \"{test_path}\"], path_glob: \"tests/**\"}\nsuite: {command: [\"pytest\"]}\npaths: {fixable: [\"lib/**\", \"src/**\"], sensitive: [\"src/billing/**\"]}\nbudget: {max_diff_lines: 200}\n", nil},
		{"tightened", "runner: {kind: command, command: [\"x\"]}\ntest: {command: [\"pytest\", \"{test_path}\"], path_glob: \"tests/**\"}\nsuite: {command: [\"pytest\"]}\npaths: {fixable: [\"src/**\"], sensitive: [\"src/billing/**\", \"src/tenancy/**\"]}\nbudget: {max_diff_lines: 50, run_cost_usd: 1}\n", nil},
		{"fixable widened", "runner: {kind: command, command: [\"x\"]}\ntest: {command: [\"pytest\", \"{test_path}\"], path_glob: \"tests/**\"}\nsuite: {command: [\"pytest\"]}\npaths: {fixable: [\"src/**\", \"lib/**\", \"**\"], sensitive: [\"src/billing/**\"]}\n",
			[]string{`paths.fixable widened: added "**"`}},
		{"sensitive shrank", "runner: {kind: command, command: [\"x\"]}\ntest: {command: [\"pytest\", \"{test_path}\"], path_glob: \"tests/**\"}\nsuite: {command: [\"pytest\"]}\npaths: {fixable: [\"src/**\", \"lib/**\"], sensitive: []}\n",
			[]string{`paths.sensitive shrank: removed "src/billing/**"`}},
		{"test glob moved", "runner: {kind: command, command: [\"x\"]}\ntest: {command: [\"pytest\", \"{test_path}\"], path_glob: \"**\"}\nsuite: {command: [\"pytest\"]}\npaths: {fixable: [\"src/**\", \"lib/**\"], sensitive: [\"src/billing/**\"]}\n",
			[]string{`test.path_glob changed from "tests/**" to "**" (the test phase's writes count as fixable)`}},
		{"budgets raised", strings.Replace(base, "command: [\"x\"]", "command: [\"x\"], max_turns: 400", 1) + "budget: {max_diff_lines: 5000, wall_clock: 2h, actor_day: {cost_usd: 1000, runs: 20, turns: 800}}\n",
			[]string{"budget.actor_day.cost_usd raised from 100 to 1000", "budget.max_diff_lines raised from 200 to 5000", "budget.wall_clock raised from 1800 to 7200", "runner.max_turns raised from 40 to 400"}},
		{"egress widened", strings.Replace(base, "command: [\"x\"]", "command: [\"x\"], egress: [\"api.anthropic.com:443\", \"paste.example:443\"], egress_max_bytes: 999999999", 1),
			[]string{`runner.egress widened: added "api.anthropic.com:443", "paste.example:443" (where the agent may send data)`, "runner.egress_max_bytes raised from 268435456 to 999999999"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prev, err := Parse("prev", []byte(base))
			if err != nil {
				t.Fatal(err)
			}
			now, err := Parse("now", []byte(tc.now))
			if err != nil {
				t.Fatal(err)
			}
			if got := prev.Rails().Loosened(now.Rails()); !slices.Equal(got, tc.want) {
				t.Errorf("Loosened =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
