package runner

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fixrail/fixrail/internal/sandbox"
)

func TestCapErrors(t *testing.T) {
	budget := strings.Replace(strings.Replace(streamSamples["success"], `"subtype":"success"`, `"subtype":"error_max_budget_usd"`, 1), `"is_error":false`, `"is_error":true`, 1)
	err := parseStream(budget).outcome(context.Background(), sandbox.Result{ExitCode: 1}, []string{"Read", "Write"}, 40)
	if e, ok := AsError(err); !ok || e.Kind != OverBudget || !errors.Is(err, ErrCostCap) || errors.Is(err, ErrTurnCap) {
		t.Fatalf("max budget result: %v", err)
	}
	err = parseStream(streamSamples["max_turns"]).outcome(context.Background(), sandbox.Result{ExitCode: 1}, []string{"Read", "Write"}, 40)
	if !errors.Is(err, ErrTurnCap) || errors.Is(err, ErrCostCap) {
		t.Fatalf("max turns result: %v", err)
	}
	if errors.Is(&Error{Kind: Failed}, ErrTurnCap) || errors.Is(&Error{Kind: Failed}, ErrCostCap) {
		t.Fatal("a plain failure matched a cap")
	}
}

func TestCostCapFlag(t *testing.T) {
	c := Claude{Binary: "claude", Hook: []string{"/usr/bin/fixrail", "hook"}}
	run, wt := phaseDir(t)
	inv := claudeInvocation(run, wt, Investigate)
	for _, tc := range []struct {
		cost float64
		want []string
	}{{0, nil}, {0.25, []string{"--max-budget-usd", "0.25"}}} {
		inv.MaxCostUSD = tc.cost
		p, err := c.plan(inv)
		if err != nil {
			t.Fatal(err)
		}
		argv, err := p.argv("/r")
		if err != nil {
			t.Fatal(err)
		}
		i := slices.Index(argv, "--max-budget-usd")
		switch {
		case tc.want == nil && i >= 0:
			t.Fatalf("no cap, but argv has %v", argv[i:i+2])
		case tc.want != nil && (i < 0 || !slices.Equal(argv[i:i+2], tc.want)):
			t.Fatalf("cap %v: argv %v", tc.cost, argv)
		}
	}
	inv.MaxCostUSD = -1
	if _, err := c.plan(inv); err == nil {
		t.Fatal("a negative cost cap was accepted")
	}
}
