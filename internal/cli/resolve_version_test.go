package cli

import (
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fixrail/fixrail/internal/vulndata/vulntest"
)

// TestScriptCVE runs the cve scenarios in testdata/cve through the real
// binary, each against its own strict OSV/deps.dev stand-in (the vulnstub
// command): a request the scenario did not expect, or an expected one never
// made, fails the script at vulnstub check.
func TestScriptCVE(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/cve",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Setup: func(env *testscript.Env) error {
			h := &stubHolder{}
			env.Values["vulnstub"] = h
			env.Setenv("HOME", env.WorkDir+"/home")
			env.Defer(func() {
				if h.srv != nil {
					h.srv.Stop()
				}
			})
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"fixrail-exit":         cmdFixrailExit,
			"fixrail-resolve-exit": cmdResolveExit,
			"vulnstub":             cmdVulnStub,
		},
	})
}

type stubHolder struct{ srv *vulntest.Server }

// vulnstub start SCENARIO...: serve those scenarios, $VULN_URL is the base URL.
// vulnstub check: fail on unexpected or repeated requests and on unmade ones.
func cmdVulnStub(ts *testscript.TestScript, neg bool, args []string) {
	h := ts.Value("vulnstub").(*stubHolder)
	if neg || len(args) == 0 {
		ts.Fatalf("usage: vulnstub start SCENARIO... | vulnstub check")
	}
	switch args[0] {
	case "start":
		if h.srv != nil {
			h.srv.Stop()
		}
		var scs []*vulntest.Scenario
		for _, name := range args[1:] {
			sc, err := vulntest.Load(name)
			ts.Check(err)
			scs = append(scs, sc)
		}
		h.srv = vulntest.New(scs...)
		ts.Setenv("VULN_URL", h.srv.URL)
	case "check":
		if h.srv == nil {
			ts.Fatalf("vulnstub check before start")
		}
		if p := h.srv.Problems(); len(p) > 0 {
			ts.Fatalf("vulnerability stand-in:\n%s", strings.Join(p, "\n"))
		}
	default:
		ts.Fatalf("vulnstub: unknown subcommand %q", args[0])
	}
}
