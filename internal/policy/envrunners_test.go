package policy

import "testing"

// TestCommandRunners: a command another program runs on this file system
// is judged as if typed.
func TestCommandRunners(t *testing.T) {
	const rm = "rm -rf /srv/data"
	for _, c := range []tc{
		{id: "xvfb-run", in: "xvfb-run -a " + rm, want: "destructive"},
		{id: "firejail", in: "firejail --noprofile --private=/tmp/x " + rm, want: "destructive"},
		{id: "valgrind", in: "valgrind --tool=memcheck " + rm, want: "destructive"},
		{id: "unshare", in: "unshare -r -w /tmp " + rm, want: "destructive"},
		{id: "nsenter", in: "nsenter -t 1 -m " + rm, want: "destructive scope-escalation"},
		{id: "schroot", in: "schroot -c sid -- " + rm, want: "destructive scope-escalation"},
		{id: "proot", in: "proot -b /srv " + rm, want: "destructive"},
		{id: "bwrap", in: "bwrap --bind / / --dev /dev --unshare-pid " + rm, want: "destructive"},
		{id: "bwrap-unknown", in: "bwrap --future-option x " + rm, want: "self-mod? push-force? push-protected? publish? egress-other? destructive? scope-escalation? discard? teardown? data-drop? branch-delete? history-prune?"},
		{id: "entr", in: "ls | entr -r " + rm, want: "destructive"},
		{id: "entr-shell", in: "ls | entr -s '" + rm + "'", want: "destructive"},
		{id: "rlwrap", in: "rlwrap -H /tmp/h " + rm, want: "destructive"},
		{id: "gtimeout", in: "gtimeout 5 " + rm, want: "destructive"},
		{id: "uv-run", in: "uv run --with requests " + rm, want: "destructive"},
		{id: "poetry-run", in: "poetry run " + rm, want: "destructive"},
		{id: "pdm-run", in: "pdm run " + rm, want: "destructive"},
		{id: "hatch-run", in: "hatch run " + rm, want: "destructive"},
		{id: "pipenv-run", in: "pipenv run " + rm, want: "destructive"},
		{id: "conda-run", in: "conda run -n base --no-capture-output " + rm, want: "destructive"},
		{id: "pixi-run", in: "pixi run -e dev " + rm, want: "destructive"},
		{id: "mise-exec", in: "mise exec node@20 -- " + rm, want: "destructive"},
		{id: "mise-c", in: "mise x -c '" + rm + "'", want: "destructive"},
		{id: "direnv-exec", in: "direnv exec . " + rm, want: "destructive"},
		{id: "dotenv", in: "dotenv -e .env.test -- " + rm, want: "destructive"},
		{id: "nix-develop", in: "nix develop .#ci -c " + rm, want: "destructive"},
		{id: "nix-shell", in: "nix-shell -p hello --run '" + rm + "'", want: "destructive"},
		{id: "expect", in: "expect -c 'spawn " + rm + "'", want: "self-mod? push-force? push-protected? publish? egress-other? destructive? scope-escalation? discard? teardown? data-drop? branch-delete? history-prune?"},
		{id: "pwsh-encoded", in: "pwsh -EncodedCommand cgBtAA==", want: "self-mod? push-force? push-protected? publish? egress-other? destructive? scope-escalation? discard? teardown? data-drop? branch-delete? history-prune?"},

		{id: "uv-publish", in: "uv publish", want: "publish"},
		{id: "uv-run-tests", in: "uv run pytest -q", want: ""},
		{id: "uv-pip", in: "uv pip install -r requirements.txt", want: ""},
		{id: "poetry-install", in: "poetry install", want: ""},
		{id: "conda-install", in: "conda install -y numpy", want: ""},
		{id: "mise-install", in: "mise install", want: ""},
		{id: "direnv-allow", in: "direnv allow", want: "scope-escalation"},
		{id: "nix-build", in: "nix build .#pkg", want: ""},
		{id: "bwrap-ls", in: "bwrap --ro-bind / / ls", want: ""},
		{id: "expect-plain", in: "expect -c 'puts hi'", want: ""},
		{id: "pwsh-plain", in: "pwsh -c Get-ChildItem", want: ""},
	} {
		runCase(t, c, tenv)
	}
}
