package gitx

// The git rows of the hostile-repository corpus that need a remote, a
// credential or the parent's environment. Each plants something in a real
// repository, shows with plain git that it is live (the control), and shows
// that gitx does not let it act. The canary is a file the planted command
// writes; it must stay absent.

import (
	"context"
	"crypto/sha256"
	"errors"
	"github.com/fixrail/fixrail/internal/pathguard"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fixrail/fixrail/internal/gitx/gittest"
)

// TestFilterSeesNoCredentials: a clean/smudge filter the operator's own
// config names (as git-lfs is) dumps its environment. It may run — LFS
// needs filters — but must see none of the parent's credentials, and the
// safe class must not hand it the agent socket either. (A filter the
// clone's own config names never runs: TestPinnedProgramsDoNotRun.)
func TestFilterSeesNoCredentials(t *testing.T) {
	ctx := context.Background()
	t.Setenv("GITHUB_TOKEN", "canary-github-token")
	t.Setenv("ANTHROPIC_API_KEY", "canary-anthropic-key")
	t.Setenv("GH_TOKEN", "canary-gh-token")
	t.Setenv("SSH_AUTH_SOCK", "/canary/agent.sock")

	dumps := t.TempDir()
	script := filepath.Join(t.TempDir(), "dump.sh")
	body := "#!/bin/sh\nenv > '" + dumps + "'/\"$1.$$\"\nexec cat\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := gittest.NewRepo(t, map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt filter=dump\n"})
	snap := takeSnapshot(t, "", "[filter \"dump\"]\n\tclean = "+script+" clean\n\tsmudge = "+script+" smudge\n")

	// read returns the dumps written since the last call, and clears them.
	read := func() []string {
		ents, err := os.ReadDir(dumps)
		if err != nil {
			t.Fatal(err)
		}
		var envs []string
		for _, e := range ents {
			p := filepath.Join(dumps, e.Name())
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			envs = append(envs, e.Name()+":\n"+string(b))
			os.Remove(p)
		}
		return envs
	}
	check := func(phase string, envs []string, socketAllowed bool) {
		t.Helper()
		for _, env := range envs {
			for _, secret := range []string{"GITHUB_TOKEN=", "ANTHROPIC_API_KEY=", "GH_TOKEN=", "canary-"} {
				if strings.Contains(env, secret) {
					t.Errorf("%s: filter saw %s", phase, secret)
				}
			}
			if !socketAllowed && strings.Contains(env, "SSH_AUTH_SOCK=") {
				t.Errorf("%s: a safe-class filter saw the agent socket", phase)
			}
		}
	}

	r, err := snap.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Baseline(ctx); err != nil {
		t.Fatal(err)
	}
	wt, err := r.AddWorktree(ctx, filepath.Join(t.TempDir(), "wt"), "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	gittest.WriteFiles(t, wt.Dir, map[string]string{"a.txt": "changed\n", "new.txt": "new\n"})
	if _, err := wt.Changes(ctx, true); err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Diff(ctx, nil); err != nil {
		t.Fatal(err)
	}
	safe := read()
	if len(safe) == 0 {
		t.Fatal("control: the planted filter never ran, so this proves nothing")
	}
	check("checkout, status, diff", safe, false)

	if _, err := wt.Commit(ctx, []string{"a.txt", "new.txt"}, "m", Identity{"B", "b@example.com"}); err != nil {
		t.Fatal(err)
	}
	check("commit", read(), true)
}

// credentialHelpers is the repository-config helper corpus: a generic one
// and one scoped to the push URL.
func credentialHelpers(url string) []struct{ name, key string } {
	return []struct{ name, key string }{
		{"generic", "credential.helper"},
		{"URL-scoped", "credential." + url + ".helper"},
	}
}

// TestCredentialFillNoHelper: `git credential fill` through the safe and
// commit classes runs neither a planted helper nor the operator's.
func TestCredentialFillNoHelper(t *testing.T) {
	const url = "https://example.com"
	for _, h := range credentialHelpers(url) {
		t.Run(h.name, func(t *testing.T) {
			ctx := context.Background()
			opHelper, opRan := canary(t)
			s := takeSnapshot(t, "", "[credential]\n\thelper = "+opHelper+"\n")
			dir := gittest.NewRepo(t, nil)
			planted, plantedRan := canary(t)
			gittest.Git(t, dir, "config", h.key, planted)
			r, err := s.Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []class{classSafe, classCommit} {
				_, err := r.run(ctx, invocation{dir: dir, class: c, args: []string{"credential", "fill"},
					stdin: []byte("protocol=https\nhost=example.com\n\n")})
				if err == nil {
					t.Errorf("class %d: credential fill succeeded; it had nothing to fill from", c)
				}
			}
			if ran(plantedRan) || ran(opRan) {
				t.Fatalf("a helper ran through credential fill (planted %v, operator %v)", ran(plantedRan), ran(opRan))
			}
			gittest.RunInput(t, dir, "protocol=https\nhost=example.com\n\n", "credential", "fill")
			if !ran(plantedRan) {
				t.Fatal("control: plain git credential fill did not run the planted helper either")
			}
		})
	}
}

// TestPushCredentialHelpers pushes to an HTTP remote that asks for
// credentials: the push runs the operator's helper from the snapshot, and
// not a helper planted in the repository's config before the baseline.
func TestPushCredentialHelpers(t *testing.T) {
	t.Setenv("no_proxy", "*")
	t.Setenv("NO_PROXY", "*")
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Header().Set("WWW-Authenticate", `Basic realm="gitx-test"`)
		http.Error(w, "authenticate", http.StatusUnauthorized)
	}))
	defer srv.Close()
	remote := srv.URL + "/repo.git"

	for _, h := range credentialHelpers(srv.URL) {
		t.Run(h.name, func(t *testing.T) {
			ctx := context.Background()
			hits.Store(0)
			opRan := filepath.Join(t.TempDir(), "operator-helper-ran")
			opHelper := filepath.Join(t.TempDir(), "op-helper.sh")
			body := "#!/bin/sh\necho \"$1\" >> '" + opRan + "'\n[ \"$1\" = get ] && printf 'username=u\\npassword=p\\n'\nexit 0\n"
			if err := os.WriteFile(opHelper, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			s := takeSnapshot(t, "", "[credential]\n\thelper = "+opHelper+"\n")
			dir := gittest.NewRepo(t, nil)
			gittest.Git(t, dir, "remote", "add", "origin", remote)
			planted, plantedRan := canary(t)
			gittest.Git(t, dir, "config", h.key, planted)
			r, err := s.Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Baseline(ctx); err != nil {
				t.Fatal(err)
			}
			sha := gittest.Git(t, dir, "rev-parse", "HEAD")
			err = r.Push(ctx, sha+":refs/heads/fix")
			if err == nil {
				t.Fatal("Push to a remote that refuses every credential succeeded")
			}
			if hits.Load() == 0 {
				t.Fatalf("the push never reached the server: %v", err)
			}
			if ran(plantedRan) {
				t.Errorf("the planted %s helper ran during Push", h.name)
			}
			if !ran(opRan) {
				t.Errorf("the operator's helper from the snapshot did not run during Push: %v", err)
			}
			if perr := r.Poisoned(); perr != nil {
				t.Errorf("a refused push poisoned the Repo: %v", perr)
			}

			gittest.Run(t, dir, "push", "origin", sha+":refs/heads/fix")
			if !ran(plantedRan) {
				t.Fatal("control: plain git push did not run the planted helper either")
			}
		})
	}
}

// TestInsteadOfCaughtBeforePush: url.<x>.insteadOf cannot be overridden
// with -c, since its key is named by URL. One planted after the baseline
// would send the push elsewhere; the drift check before the push stops it.
func TestInsteadOfCaughtBeforePush(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gittest.NewRepo(t, nil)
	origin, evil := gittest.NewBare(t), gittest.NewBare(t)
	gittest.Git(t, dir, "remote", "add", "origin", origin)
	r := baselined(t, dir)
	sha := gittest.Git(t, dir, "rev-parse", "HEAD")

	gittest.Git(t, dir, "config", "url."+evil+".insteadOf", origin) // mid-run, no RepositoryCodeRan
	err := r.Push(ctx, sha+":refs/heads/fix")
	wantDrift(t, err, []string{"url." + evil + ".insteadof"}, nil, nil)
	for _, bare := range []string{origin, evil} {
		if out, _ := gittest.Run(t, bare, "show-ref"); out != "" {
			t.Errorf("%s received refs: %s", bare, out)
		}
	}

	gittest.Git(t, dir, "push", "--quiet", origin, sha+":refs/heads/fix")
	if out, _ := gittest.Run(t, evil, "show-ref"); out == "" {
		t.Fatal("control: plain git push to the origin URL did not land in the insteadOf target")
	}
}

// TestExtRemote: an ext:: remote with protocol.ext.allow=always in the
// clone's config (before the baseline, so no drift) runs its command on
// plain git. Push refuses the transport; the safe class reaches no
// transport at all.
func TestExtRemote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gittest.NewRepo(t, nil)
	script, file := canary(t)
	gittest.Git(t, dir, "remote", "add", "origin", "ext::"+script+" %S")
	gittest.Git(t, dir, "config", "protocol.ext.allow", "always")
	r := baselined(t, dir)
	sha := gittest.Git(t, dir, "rev-parse", "HEAD")

	if err := r.Push(ctx, sha+":refs/heads/fix"); err == nil || !strings.Contains(err.Error(), `"ext"`) {
		t.Errorf("Push to ext:: = %v, want the ext helper refused", err)
	}
	for _, args := range [][]string{{"ls-remote", "origin"}, {"fetch", "origin"}, {"push", "origin", sha + ":refs/heads/fix"}} {
		if _, err := r.run(ctx, invocation{dir: dir, args: args}); err == nil {
			t.Errorf("safe-class git %s succeeded", args[0])
		}
	}
	if ran(file) {
		b, _ := os.ReadFile(file)
		t.Fatalf("the ext:: command ran through gitx:\n%s", b)
	}
	if err := r.Poisoned(); err != nil {
		t.Errorf("Poisoned = %v", err)
	}

	gittest.Run(t, dir, "ls-remote", "origin")
	if !ran(file) {
		t.Fatal("control: plain git ls-remote did not run the ext:: command either")
	}
}

// TestPushBareRemote: Push works against a local bare remote with an
// explicit refspec, writes nothing into the clone's config, and never
// force-updates.
func TestPushBareRemote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
	bare := gittest.NewBare(t)
	gittest.Git(t, dir, "remote", "add", "origin", bare)
	r := baselined(t, dir)
	if got := r.PushURL(); got != bare {
		t.Errorf("PushURL = %q, want %q", got, bare)
	}
	commit := func(name string) string {
		gittest.WriteFiles(t, dir, map[string]string{name: name})
		gittest.Git(t, dir, "add", name)
		gittest.Git(t, dir, "commit", "--quiet", "-m", name)
		return gittest.Git(t, dir, "rev-parse", "HEAD")
	}
	remoteFix := func() string {
		out, _ := gittest.Run(t, bare, "rev-parse", "--verify", "--quiet", "refs/heads/fix")
		return out
	}
	c1 := gittest.Git(t, dir, "rev-parse", "HEAD")
	if err := r.Push(ctx, c1+":refs/heads/fix"); err != nil {
		t.Fatal(err)
	}
	c2 := commit("b.txt")
	if err := r.Push(ctx, c2+":refs/heads/fix"); err != nil {
		t.Fatalf("fast-forward push: %v", err)
	}
	if got := remoteFix(); got != c2 {
		t.Fatalf("remote fix = %s, want %s", got, c2)
	}
	// c3 does not descend from c2.
	gittest.Git(t, dir, "reset", "--quiet", "--hard", c1)
	c3 := commit("c.txt")
	if err := r.Push(ctx, c3+":refs/heads/fix"); err == nil {
		t.Error("non-fast-forward push succeeded")
	}
	for _, spec := range []string{
		"+" + c3 + ":refs/heads/fix",
		"HEAD:refs/heads/fix",
		c3[:12] + ":refs/heads/fix",
		c3 + ":refs/tags/fix",
		c3 + ":fix",
		c3 + ":refs/heads/-fix",
		c3 + ":refs/heads/fix:x",
		c3,
		"refs/heads/*:refs/heads/*",
		":refs/heads/fix", // a deletion
	} {
		if err := r.Push(ctx, spec); err == nil {
			t.Errorf("Push(%q) = nil, want refusal", spec)
		}
	}
	if got := remoteFix(); got != c2 {
		t.Errorf("remote fix = %s after refused pushes, want %s unchanged", got, c2)
	}
	if err := r.Poisoned(); err != nil {
		t.Errorf("Push tripped its own drift check: %v", err)
	}
	if cfg := gittest.Git(t, dir, "config", "--list"); strings.Contains(cfg, "branch.") || strings.Contains(cfg, ".merge=") {
		t.Errorf("Push wrote an upstream into the clone's config:\n%s", cfg)
	}
}

// TestPushNeedsOrigin: without an origin at baseline there is nothing to
// push to, and adding one later is drift.
func TestPushNeedsOrigin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := gittest.NewRepo(t, nil)
	r := baselined(t, dir)
	sha := gittest.Git(t, dir, "rev-parse", "HEAD")
	if err := r.Push(ctx, sha+":refs/heads/fix"); err == nil || errors.Is(err, ErrPoisoned) {
		t.Errorf("Push without origin = %v, want a plain refusal", err)
	}
	gittest.Git(t, dir, "remote", "add", "origin", gittest.NewBare(t))
	wantDrift(t, r.Push(ctx, sha+":refs/heads/fix"), []string{"remote.origin.url", "remote.origin.fetch"}, nil, nil)
}

func TestTransportOf(t *testing.T) {
	tests := []struct {
		url, want string // want "" means refused
	}{
		{"https://github.com/o/r.git", "https"},
		{"http://127.0.0.1:8080/r.git", "http"},
		{"ssh://git@github.com/o/r.git", "ssh"},
		{"git+ssh://git@github.com/o/r.git", "ssh"},
		{"git@github.com:o/r.git", "ssh"},
		{"github.com:o/r.git", "ssh"},
		{"git://example.com/r.git", "git"},
		{"file:///srv/r.git", "file"},
		{"/srv/r.git", "file"},
		{"../r.git", "file"},
		{"./a:b", "file"},
		{"ext::sh -c evil", ""},
		{"fd::3", ""},
		{"persistent-https::https://x", ""},
		{"ftp://example.com/r.git", ""},
		{"HTTPS://github.com/o/r.git", ""},
		{"", ""},
	}
	for _, tc := range tests {
		got, err := transportOf(tc.url)
		if tc.want == "" {
			if err == nil {
				t.Errorf("transportOf(%q) = %q, want refusal", tc.url, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("transportOf(%q) = %q, %v; want %q", tc.url, got, err, tc.want)
		}
	}
}

// TestClassRails checks each class's argv prefix and environment.
func TestClassRails(t *testing.T) {
	snapDir := t.TempDir()
	for k, v := range map[string]string{
		"FIXRAIL_TEST_TOKEN": "secret", "ANTHROPIC_API_KEY": "secret", "GITHUB_TOKEN": "gh",
		"SSH_AUTH_SOCK": "/agent", "GNUPGHOME": "/gpg", "GIT_SSH_COMMAND": "planted", "GIT_ASKPASS": "planted",
		"TMPDIR": "/snapshots/live/here",
	} {
		t.Setenv(k, v)
	}
	s := &Snap{dir: snapDir, path: filepath.Join(snapDir, "config"), entries: []configEntry{
		{Key: "credential.helper", HasValue: true, Value: "/op/helper"},
		{Key: "credential.https://github.com.helper", HasValue: true, Value: ""},
		{Key: "credential.https://github.com.helper", HasValue: true, Value: "!gh auth git-credential"},
		{Key: "core.sshcommand", HasValue: true, Value: "ssh -i /op/key"},
		{Key: "core.askpass", HasValue: true, Value: "/op/askpass"},
	}}
	data, err := encodeConfig(s.entries)
	if err != nil {
		t.Fatal(err)
	}
	if err := pathguard.WriteNew(s.path, data, 0o400); err != nil {
		t.Fatal(err)
	}
	s.sum = sha256.Sum256(data)
	r := &Repo{snap: s}

	build := func(c class, transport string) (args []string, env map[string]string) {
		t.Helper()
		cmd, err := r.command(context.Background(), invocation{dir: "/d", class: c, transport: transport, args: []string{"x"}})
		if err != nil {
			t.Fatal(err)
		}
		env = map[string]string{}
		for _, kv := range cmd.Env {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		var cfg []string
		a := cmd.Args[1 : len(cmd.Args)-1]
		for i := 0; i+1 < len(a); i += 2 {
			if a[i] != "-c" {
				t.Fatalf("prefix holds %q, want only -c pairs", a[i])
			}
			cfg = append(cfg, a[i+1])
		}
		return cfg, env
	}
	never := func(cfg []string, except string) {
		t.Helper()
		for _, p := range transports {
			want := "protocol." + p + ".allow=never"
			if p == except {
				want = "protocol." + p + ".allow=always"
			}
			if !slices.Contains(cfg, want) {
				t.Errorf("prefix lacks %s", want)
			}
		}
	}
	absent := func(env map[string]string, names ...string) {
		t.Helper()
		for _, n := range names {
			if _, ok := env[n]; ok {
				t.Errorf("env passes %s", n)
			}
		}
	}

	for _, c := range []class{classSafe, classCommit} {
		cfg, env := build(c, "")
		if cfg[0] != "credential.helper=" {
			t.Errorf("class %d: first -c is %q, want credential.helper=", c, cfg[0])
		}
		for _, w := range []string{"core.sshCommand=false", "core.askPass=", "protocol.allow=never", "core.hooksPath=/dev/null", "core.fsmonitor=false"} {
			if !slices.Contains(cfg, w) {
				t.Errorf("class %d: prefix lacks %s", c, w)
			}
		}
		never(cfg, "")
		if got, ok := env["GIT_ALLOW_PROTOCOL"]; !ok || got != "" {
			t.Errorf("class %d: GIT_ALLOW_PROTOCOL = %q (set %v), want empty", c, got, ok)
		}
		if env["GIT_CONFIG_GLOBAL"] != s.path || env["GIT_CONFIG_NOSYSTEM"] != "1" {
			t.Errorf("class %d: global config %q nosystem %q", c, env["GIT_CONFIG_GLOBAL"], env["GIT_CONFIG_NOSYSTEM"])
		}
		absent(env, "FIXRAIL_TEST_TOKEN", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "GIT_SSH_COMMAND", "TMPDIR")
		if env["GIT_ASKPASS"] != "" {
			t.Errorf("class %d: GIT_ASKPASS = %q", c, env["GIT_ASKPASS"])
		}
		if c == classSafe {
			absent(env, "SSH_AUTH_SOCK", "GNUPGHOME")
		} else if env["SSH_AUTH_SOCK"] != "/agent" || env["GNUPGHOME"] != "/gpg" {
			t.Errorf("commit class lacks the signing agent: %v", env)
		}
	}

	cfg, env := build(classPush, "https")
	wantHead := []string{
		"credential.helper=", "credential.helper=/op/helper",
		"credential.https://github.com.helper=", "credential.https://github.com.helper=!gh auth git-credential",
		"core.sshCommand=ssh -i /op/key", "core.askPass=/op/askpass",
	}
	if len(cfg) < len(wantHead) || !slices.Equal(cfg[:len(wantHead)], wantHead) {
		t.Errorf("push prefix starts %q, want %q", cfg[:min(len(cfg), len(wantHead))], wantHead)
	}
	never(cfg, "https")
	if env["GIT_ALLOW_PROTOCOL"] != "https" {
		t.Errorf("push GIT_ALLOW_PROTOCOL = %q", env["GIT_ALLOW_PROTOCOL"])
	}
	if env["GITHUB_TOKEN"] != "gh" || env["SSH_AUTH_SOCK"] != "/agent" {
		t.Errorf("push env lacks its credentials: %v", env)
	}
	absent(env, "FIXRAIL_TEST_TOKEN", "ANTHROPIC_API_KEY", "GNUPGHOME", "GIT_SSH_COMMAND", "GIT_ASKPASS")

	for _, tr := range []string{"", "ext", "fd", "hg"} {
		if _, err := r.command(context.Background(), invocation{class: classPush, transport: tr, args: []string{"push"}}); err == nil {
			t.Errorf("push class with transport %q built", tr)
		}
	}
	if _, err := r.command(context.Background(), invocation{class: class(99), args: []string{"x"}}); err == nil {
		t.Error("unknown class built")
	}
	for _, args := range [][]string{{"diff"}, {"diff-index", "--no-ext-diff", "HEAD"}, {"log", "--no-textconv"}} {
		if _, err := r.command(context.Background(), invocation{args: args}); err == nil {
			t.Errorf("git %q built without --no-ext-diff --no-textconv", args)
		}
	}
	if _, err := r.command(context.Background(), invocation{args: []string{"diff-index", "--no-textconv", "--no-ext-diff", "HEAD"}}); err != nil {
		t.Error(err)
	}
}
