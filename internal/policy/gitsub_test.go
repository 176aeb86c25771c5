package policy

import "testing"

// TestGitSubcommandsAreKnown guards the subcommand table against an entry
// gitArgs can never reach: it dispatches only after the name passed
// gitCommands, so a handler for a name missing there would be dead while the
// command it was written for is reported as unknown instead.
func TestGitSubcommandsAreKnown(t *testing.T) {
	gitSubcommandsOnce.Do(initGitSubcommands)
	if len(gitSubcommands) == 0 {
		t.Fatal("gitSubcommands is empty: initGitSubcommands did not fill it")
	}
	for name := range gitSubcommands {
		if !gitCommands.has(name) {
			t.Errorf("gitSubcommands has %q, which gitCommands does not list", name)
		}
	}
}
