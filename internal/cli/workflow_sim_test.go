package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"

	"github.com/fixrail/fixrail/internal/conformance"
	"github.com/fixrail/fixrail/internal/forge/githubtest"
	"github.com/fixrail/fixrail/internal/runner/claudetest"
)

// This file runs the reference workflow the way a GitHub-hosted Ubuntu
// runner would: every step in order, each `run:` with bash -eo pipefail in
// the workspace, GITHUB_PATH and GITHUB_ENV carried between steps, and the
// job's if:, env: and each step's env: evaluated. What the runner would
// fetch from the internet is served locally instead:
//
//   - the repository: a bare repository behind git's smart-HTTP backend that
//     answers only the job's token (a private repository), at
//     $GITHUB_SERVER_URL/o/r; actions/checkout is stood in by a clone made
//     with the token in a one-off header, leaving none in .git/config;
//   - the GitHub API: the strict fake (githubtest), at $GITHUB_API_URL;
//   - the Go module proxy: fixrail at a version built from this source tree
//     (the pin), and a newer release nobody reviewed; actions/setup-go is
//     stood in by the local Go, whose build and module caches it reuses;
//   - npm, apt-get and sudo: stubs on PATH. npm installs the locally
//     installed Claude Code CLI (FIXRAIL_CLAUDE_BIN) for the pinned
//     version and a stand-in for anything else; apt-get puts the host's
//     bwrap on PATH. PATH holds only a runner image of the host's tools
//     that lacks bwrap, npm and sudo, so nothing is there that a step did
//     not install.
//
// The agent is the scenario's scripted command runner, not the real CLI:
// the CLI's tool calls need the absolute worktree and PLAN.json paths that
// fixrail draws per run, which a scripted fake model cannot know before the
// run; the real CLI against the fake model is covered by the runner and
// pipeline end-to-end tests. The job uses the rest of the fixrail.yaml
// `fixrail init` writes (sandbox: required among it) unchanged.

// simToken is the job's GITHUB_TOKEN: what the fake API and the git server
// accept.
const simToken = githubtest.Token

// simPinVersion is the version of this source tree on the simulated proxy:
// a pseudo-version whose hash part is the tree's content, so that a changed
// tree is a new version in the shared module cache, never a stale one.
func simPinVersion(zipData []byte) string {
	h := sha256.Sum256(zipData)
	return "v0.0.0-20260101000000-" + hex.EncodeToString(h[:])[:12]
}

// simDecoy is the newer release on the proxy: what @latest gets.
const simDecoy = "v1.99.0"

type simJob struct {
	t         *testing.T
	dir       string // everything of the simulation
	workspace string
	home      string
	image     string // the runner image's bin directory
	tools     string // where the stubs install (on PATH from the start)
	temp      string // RUNNER_TEMP
	serverURL string
	apiURL    string
	remote    string // the bare repository
	proxy     string
	gitlog    *bytes.Buffer
	// What repository() adds to the project: lines appended to the
	// fixrail.yaml init writes, and files.
	extraConfig string
	extraFiles  map[string]string
}

// newSimJob lays out a runner, a private repository holding the project and
// the fixrail.yaml init writes, and the module proxy.
func newSimJob(t *testing.T, proxy string) *simJob {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	j := &simJob{t: t, dir: dir, workspace: filepath.Join(dir, "work", "r", "r"), home: filepath.Join(dir, "home"),
		image: filepath.Join(dir, "image", "bin"), tools: filepath.Join(dir, "tools", "bin"), temp: filepath.Join(dir, "runner-temp"), proxy: proxy}
	for _, d := range []string{j.workspace, j.home, j.image, j.tools, j.temp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	j.runnerImage()
	j.stubs()
	j.gitServer()
	return j
}

// runnerImage links the host tools a hosted runner has into one directory,
// leaving out what a step must install.
func (j *simJob) runnerImage() {
	for _, name := range []string{"bash", "sh", "env", "git", "cat", "mkdir", "ln", "rm", "cp", "mv", "chmod", "printf", "echo",
		"dirname", "basename", "sed", "grep", "tr", "head", "tail", "tee", "test", "true", "false", "uname", "id",
		"mktemp", "sort", "wc", "ls", "touch", "find", "xargs", "readlink", "realpath", "python3", "sleep", "date", "cut"} {
		p, err := exec.LookPath(name)
		if name == "python3" {
			// The system interpreter: a version manager's shim lives in
			// the operator's home, which no sandbox mounts.
			p, err = "/usr/bin/python3", nil
		}
		if err != nil {
			j.t.Fatalf("runner image: %s: %v", name, err)
		}
		if err := os.Symlink(p, filepath.Join(j.image, name)); err != nil {
			j.t.Fatal(err)
		}
	}
}

// stubs writes sudo, apt-get and npm. Each logs its argv to tools/calls.
func (j *simJob) stubs() {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		j.t.Fatal("bubblewrap is required on the host: the simulated apt-get installs it")
	}
	claude := claudetest.Binary(j.t)
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(j.dir, "stubs", name), []byte("#!/bin/bash\nset -eu\necho \""+name+" $*\" >> "+filepath.Join(j.dir, "stub-calls")+"\n"+body), 0o755); err != nil {
			j.t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(j.dir, "stubs"), 0o755); err != nil {
		j.t.Fatal(err)
	}
	// sudo runs apt-get only: nothing of the simulation writes to the
	// host's /etc (the AppArmor branch is not taken where the sysctl is
	// absent, as here).
	write("sudo", `[ "$1" = apt-get ] || { echo "sudo (simulated): $1 is not simulated" >&2; exit 1; }
shift; exec `+filepath.Join(j.dir, "stubs", "apt-get")+` "$@"
`)
	write("apt-get", `case "$1" in
update) exit 0 ;;
install) for p in "$@"; do [ "$p" = bubblewrap ] && { ln -sf `+bwrap+` `+filepath.Join(j.tools, "bwrap")+`; exit 0; }; done ;;
esac
echo "apt-get (simulated): $* is not simulated" >&2; exit 100
`)
	write("npm", `[ "$1" = install ] || { echo "npm (simulated): $1" >&2; exit 1; }
prefix= spec=
while [ $# -gt 0 ]; do case "$1" in --prefix) prefix=$2; shift ;; @anthropic-ai/claude-code*) spec=$1 ;; esac; shift; done
[ -n "$prefix" ] && [ -n "$spec" ] || { echo "npm (simulated): want --prefix DIR @anthropic-ai/claude-code@VERSION" >&2; exit 1; }
mkdir -p "$prefix/node_modules/.bin"
if [ "$spec" = "@anthropic-ai/claude-code@`+claudetest.Version+`" ]; then
  ln -sf `+claude+` "$prefix/node_modules/.bin/claude"
else
  # The registry's latest: a release fixrail's rails were not tested against.
  printf '#!/bin/sh\necho "claude 9.9.9 (simulated latest)"\nexit 1\n' > "$prefix/node_modules/.bin/claude"
  chmod +x "$prefix/node_modules/.bin/claude"
fi
`)
	for _, name := range []string{"sudo", "apt-get", "npm"} {
		if err := os.Symlink(filepath.Join(j.dir, "stubs", name), filepath.Join(j.image, name)); err != nil {
			j.t.Fatal(err)
		}
	}
}

// gitServer serves the bare repository o/r over smart HTTP to the token
// only, as GitHub serves a private repository.
func (j *simJob) gitServer() {
	root := filepath.Join(j.dir, "git")
	j.remote = filepath.Join(root, "o", "r")
	j.gitlog = &bytes.Buffer{}
	backend := filepath.Join(strings.TrimSpace(j.git("", "--exec-path")), "git-http-backend")
	h := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=x-access-token"}}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+simToken))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != want {
			fmt.Fprintf(j.gitlog, "401 %s %s\n", r.Method, r.URL)
			w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		fmt.Fprintf(j.gitlog, "ok %s %s\n", r.Method, r.URL)
		h.ServeHTTP(w, r)
	}))
	j.t.Cleanup(srv.Close)
	j.serverURL = srv.URL
}

func (j *simJob) git(dir string, args ...string) string {
	j.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+j.home, "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		j.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// repository commits the project to the remote: the S1 library, its tests
// and the fixrail.yaml `fixrail init` writes for it, with the agent
// scripted (runner.kind command) and unittest for test and suite.
func (j *simJob) repository() {
	src := filepath.Join(j.dir, "project")
	files := map[string]string{
		"src/app/__init__.py":  "",
		"src/app/format.py":    "def shout(text):\n    return text.upper() + \"!\"\n",
		"tests/__init__.py":    "",
		"tests/test_format.py": "import os\nimport sys\nimport unittest\n\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), \"..\", \"src\"))\n\nfrom app.format import shout  # noqa: E402\n\n\nclass ShoutTest(unittest.TestCase):\n    def test_hi(self):\n        self.assertEqual(shout(\"hi\"), \"HI!\")\n",
	}
	var tracked []string
	for p := range files {
		tracked = append(tracked, p)
	}
	slices.Sort(tracked)
	cfg := initConfig(detectLayout(tracked, func(p string) []byte { return []byte(files[p]) }))
	agent := filepath.Join(j.dir, "scenario_agent.py")
	// Only the runner changes: init's own test and suite commands (unittest
	// for this layout) run as written.
	for old, new := range map[string]string{
		"  kind: claude\n  binary: claude\n": `  kind: command
  command: ["python3", "` + agent + `"]
  ro_paths: ["` + agent + `"]
  rw_paths: ["` + filepath.Join(j.dir, "agent") + `"]
`,
	} {
		if !strings.Contains(cfg, old) {
			j.t.Fatalf("the fixrail.yaml init writes no longer holds %q", old)
		}
		cfg = strings.Replace(cfg, old, new, 1)
	}
	if !strings.Contains(cfg, "\nsandbox: required\n") {
		j.t.Fatal("the fixrail.yaml init writes does not require the sandbox")
	}
	files["fixrail.yaml"] = cfg + j.extraConfig
	maps.Copy(files, j.extraFiles)
	for p, c := range files {
		writeFile(j.t, filepath.Join(src, p), c)
	}
	j.git("", "init", "-q", "--bare", "-b", "main", j.remote)
	j.git(j.remote, "config", "http.receivepack", "true")
	j.git("", "init", "-q", "-b", "main", src)
	j.git(src, "add", "-A")
	j.git(src, "-c", "user.name=test", "-c", "user.email=test@localhost", "commit", "-q", "-m", "initial")
	j.git(src, "push", "-q", j.remote, "main")

	// The scripted agent and what it does in each phase.
	data, err := os.ReadFile("testdata/scenario_agent.py")
	if err != nil {
		j.t.Fatal(err)
	}
	writeFile(j.t, agent, string(data))
	writeFile(j.t, filepath.Join(j.dir, "agent/investigate/files/tests/test_none.py"), "import os\nimport sys\nimport unittest\n\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), \"..\", \"src\"))\n\nfrom app.format import shout  # noqa: E402\n\n\nclass NoneTest(unittest.TestCase):\n    def test_none(self):\n        self.assertEqual(shout(None), \"!\")\n")
	writeFile(j.t, filepath.Join(j.dir, "agent/investigate/plan.json"), `{"summary": "shout calls .upper() on None", "files": ["src/app/format.py"], "test": {"path": "tests/test_none.py", "name": "test_none", "symptom": "'NoneType' object has no attribute 'upper'"}}`)
	writeFile(j.t, filepath.Join(j.dir, "agent/fix/edit"), "src/app/format.py\treturn text.upper() + \"!\"\treturn (text or \"\").upper() + \"!\"\n")
	writeFile(j.t, filepath.Join(j.dir, "agent/fix/result.json"), `{"summary": "treat None as empty", "files_changed": ["src/app/format.py"]}`)
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The workflow, as much of it as the simulation runs.
type simWorkflow struct {
	Concurrency simConcurrency       `yaml:"concurrency"`
	Jobs        map[string]simJobDef `yaml:"jobs"`
}

type simConcurrency struct {
	Group            string `yaml:"group"`
	CancelInProgress *bool  `yaml:"cancel-in-progress"`
}

type simJobDef struct {
	If       string            `yaml:"if"`
	Needs    any               `yaml:"needs"`
	Env      map[string]string `yaml:"env"`
	Outputs  map[string]string `yaml:"outputs"`
	Strategy struct {
		FailFast    *bool `yaml:"fail-fast"`
		MaxParallel int   `yaml:"max-parallel"`
		Matrix      any   `yaml:"matrix"`
	} `yaml:"strategy"`
	Concurrency simConcurrency `yaml:"concurrency"`
	Steps       []struct {
		Name string            `yaml:"name"`
		ID   string            `yaml:"id"`
		If   string            `yaml:"if"`
		Uses string            `yaml:"uses"`
		With map[string]string `yaml:"with"`
		Env  map[string]string `yaml:"env"`
		Run  string            `yaml:"run"`
	} `yaml:"steps"`
}

func parseSimWorkflow(t *testing.T, wf []byte) simWorkflow {
	t.Helper()
	var doc simWorkflow
	if err := yaml.Unmarshal(wf, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// contexts are what a job's expressions read for the event: github (the
// event and the fields of it the workflows use) and the secrets the
// simulated repository holds. Anything else an expression reads fails
// the test (workflow_expr_sim_test.go).
func (j *simJob) contexts(eventName string, event map[string]any) simCtx {
	gh := map[string]any{"event": event, "event_name": eventName, "repository": "o/r", "repository_owner": "o",
		"server_url": j.serverURL, "api_url": j.apiURL, "actor": "maint", "ref": "refs/heads/main"}
	if pr, ok := event["pull_request"].(map[string]any); ok && eventName == "pull_request" {
		gh["head_ref"] = pr["head"].(map[string]any)["ref"]
		gh["base_ref"] = pr["base"].(map[string]any)["ref"]
	}
	return simCtx{"github": gh, "secrets": map[string]any{
		"GITHUB_TOKEN":      simToken,
		"ANTHROPIC_API_KEY": "sim-model-key-not-a-secret",
		// The simulated Postgres trusts its socket: the password is
		// carried as the workflow says, and not checked.
		"FIXRAIL_LEDGER_PASSWORD": "sim-ledger-password-not-a-secret",
	}}
}

// eval fills the ${{ }} expressions of a scalar; one the evaluator does
// not know fails the test.
func (j *simJob) eval(s string, ctx simCtx) string {
	j.t.Helper()
	out, err := simInterpolate(s, ctx)
	if err != nil {
		j.t.Fatalf("%q: %v", s, err)
	}
	return out
}

// simResult is how a job ended.
type simResult struct {
	failedStep string // "" when every step passed
	log        string
	outputs    map[string]string // the job's outputs: (when every step passed)
}

// run executes the workflow's one job for the event. It stops at the
// first failing step, as Actions does.
func (j *simJob) run(wf []byte, eventName string, event map[string]any) simResult {
	t := j.t
	doc := parseSimWorkflow(t, wf)
	if len(doc.Jobs) != 1 {
		t.Fatalf("%d jobs, want 1", len(doc.Jobs))
	}
	ctx := j.contexts(eventName, event)
	for name, job := range doc.Jobs {
		if job.If != "" {
			ok, err := simCondition(job.If, ctx)
			if err != nil || !ok {
				t.Fatalf("job %s: if %q does not hold for the event (%v)", name, job.If, err)
			}
		}
		return j.runJob(job, eventName, event, ctx)
	}
	panic("unreachable")
}

// runJob runs one job's steps on this runner with ctx (github, secrets,
// and needs and matrix when the job has them): each step's env: and the
// job's evaluated, GITHUB_PATH carried, each step's GITHUB_OUTPUT read
// into steps.<id>.outputs, and the job's outputs: evaluated at its end.
func (j *simJob) runJob(job simJobDef, eventName string, event map[string]any, ctx simCtx) simResult {
	t := j.t
	eventPath := filepath.Join(j.dir, "event.json")
	data, _ := json.Marshal(event)
	writeFile(t, eventPath, string(data))
	var log strings.Builder
	gomodcache := strings.TrimSpace(goEnv(t, "GOMODCACHE"))
	base := map[string]string{
		"HOME": j.home, "LANG": "C.UTF-8", "CI": "true", "GITHUB_ACTIONS": "true", "RUNNER_OS": "Linux", "RUNNER_TEMP": j.temp,
		"GITHUB_WORKSPACE": j.workspace, "GITHUB_REPOSITORY": "o/r", "GITHUB_REPOSITORY_OWNER": "o",
		"GITHUB_EVENT_NAME": eventName, "GITHUB_EVENT_PATH": eventPath, "GITHUB_ACTOR": "maint",
		"GITHUB_SERVER_URL": j.serverURL, "GITHUB_API_URL": j.apiURL, "GITHUB_REF": "refs/heads/main",
		// The proxy stand-in: fixrail's versions, then the local module
		// cache for its dependencies. The checksum database is on the internet,
		// which the simulation does not reach: off.
		"GOPROXY": "file://" + j.proxy + ",file://" + gomodcache + "/cache/download", "GOSUMDB": "off",
		"GOMODCACHE": gomodcache, "GOCACHE": strings.TrimSpace(goEnv(t, "GOCACHE")), "GOTOOLCHAIN": "local", "GOFLAGS": "-modcacherw",
		"TMPDIR": filepath.Join(j.dir, "tmp"),
	}
	if err := os.MkdirAll(base["TMPDIR"], 0o755); err != nil {
		t.Fatal(err)
	}
	steps := map[string]any{}
	ctx = maps.Clone(ctx)
	ctx["steps"] = steps
	jobEnv := map[string]string{}
	for k, v := range job.Env {
		jobEnv[k] = j.eval(v, ctx)
	}
	var paths []string // GITHUB_PATH, newest first
	for i, st := range job.Steps {
		label := st.Name
		if label == "" {
			label = st.Uses
		}
		fmt.Fprintf(&log, "== step %d: %s\n", i, label)
		if st.If != "" {
			t.Fatalf("step %d: if: %q is not simulated", i, st.If)
		}
		env := maps.Clone(base)
		maps.Copy(env, jobEnv)
		for k, v := range st.Env {
			env[k] = j.eval(v, ctx)
		}
		env["PATH"] = strings.Join(append(append([]string{}, paths...), j.tools, j.image), string(os.PathListSeparator))
		ghPath, ghEnv, ghOut := filepath.Join(j.dir, fmt.Sprintf("path-%d", i)), filepath.Join(j.dir, fmt.Sprintf("env-%d", i)), filepath.Join(j.dir, fmt.Sprintf("out-%d", i))
		writeFile(t, ghPath, "")
		writeFile(t, ghEnv, "")
		writeFile(t, ghOut, "")
		env["GITHUB_PATH"], env["GITHUB_ENV"], env["GITHUB_OUTPUT"] = ghPath, ghEnv, ghOut
		var err error
		switch {
		case strings.HasPrefix(st.Uses, "actions/checkout@"):
			err = j.checkout(st.With, &log)
		case strings.HasPrefix(st.Uses, "actions/setup-go@"):
			err = j.setupGo(st.With, ghPath)
		case st.Uses != "":
			t.Fatalf("step %d uses %s, which is not simulated", i, st.Uses)
		default:
			err = j.bash(st.Run, env, &log)
		}
		if err != nil {
			fmt.Fprintf(&log, "== step %d failed: %v\n", i, err)
			return simResult{failedStep: label, log: log.String()}
		}
		added, _ := os.ReadFile(ghPath)
		for _, p := range strings.Split(strings.TrimSpace(string(added)), "\n") {
			if p != "" {
				paths = append([]string{p}, paths...)
			}
		}
		if e, _ := os.ReadFile(ghEnv); len(bytes.TrimSpace(e)) > 0 {
			t.Fatalf("step %d wrote GITHUB_ENV, which the simulation does not carry: %s", i, e)
		}
		outs, err := readGitHubOutput(ghOut)
		if err != nil {
			t.Fatalf("step %d: GITHUB_OUTPUT: %v", i, err)
		}
		if st.ID != "" {
			steps[st.ID] = map[string]any{"outputs": outs, "outcome": "success", "conclusion": "success"}
		}
	}
	res := simResult{log: log.String(), outputs: map[string]string{}}
	for k, v := range job.Outputs {
		res.outputs[k] = j.eval(v, ctx)
	}
	return res
}

// readGitHubOutput parses a step's $GITHUB_OUTPUT as the runner does:
// name=value lines and name<<DELIMITER blocks.
func readGitHubOutput(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if line == "" {
			continue
		}
		if name, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(name, "=") {
			var val []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				val = append(val, lines[i])
			}
			if i == len(lines) {
				return nil, fmt.Errorf("%s: no closing %s", name, delim)
			}
			out[name] = strings.Join(val, "\n")
			continue
		}
		name, val, ok := strings.Cut(line, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("line %q is neither name=value nor name<<DELIMITER", line)
		}
		out[name] = val
	}
	return out, nil
}

// checkout is actions/checkout with persist-credentials: false: the token
// is sent for the clone alone, and .git/config keeps the plain URL.
func (j *simJob) checkout(with map[string]string, log *strings.Builder) error {
	if with["persist-credentials"] != "false" || with["fetch-depth"] != "0" {
		return fmt.Errorf("checkout with %v: the simulation knows persist-credentials: false and fetch-depth: 0 only", with)
	}
	url := j.serverURL + "/o/r"
	header := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+simToken))
	cmd := exec.Command("git", "-c", "http.extraHeader="+header, "clone", "-q", url, j.workspace)
	cmd.Env = append(os.Environ(), "HOME="+j.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	log.Write(out)
	return err
}

// setupGo is actions/setup-go with the local toolchain, which must be the
// version asked for.
func (j *simJob) setupGo(with map[string]string, ghPath string) error {
	want := with["go-version"]
	if got := strings.TrimSpace(goEnv(j.t, "GOVERSION")); want == "" || !strings.HasPrefix(got, "go"+want) {
		return fmt.Errorf("setup-go: go-version %q, the local toolchain is %s", want, got)
	}
	return os.WriteFile(ghPath, []byte(filepath.Join(strings.TrimSpace(goEnv(j.t, "GOROOT")), "bin")+"\n"), 0o644)
}

// bash runs one run: script as Actions does (bash --noprofile --norc -eo
// pipefail, in the workspace).
func (j *simJob) bash(script string, env map[string]string, log *strings.Builder) error {
	f := filepath.Join(j.dir, "step.sh")
	writeFile(j.t, f, script)
	cmd := exec.Command(filepath.Join(j.image, "bash"), "--noprofile", "--norc", "-eo", "pipefail", f)
	cmd.Dir = j.workspace
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	log.Write(out.Bytes())
	return err
}

func goEnv(t *testing.T, name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// simProxy publishes this source tree as the pinned version and a newer
// release that is not it, in the layout of a GOPROXY file:// URL. The
// extracted copies are removed from the shared module cache afterwards.
func simProxy(t *testing.T) (dir, pin string) {
	dir = t.TempDir()
	root := strings.TrimSpace(goEnvIn(t, "..", "GOMOD"))
	if !strings.HasSuffix(root, "go.mod") {
		t.Fatalf("module root: %q", root)
	}
	root = filepath.Dir(root)
	var zbuf bytes.Buffer
	// A throwaway version first: the real one is named by the zip's hash.
	probe := module.Version{Path: "github.com/fixrail/fixrail", Version: "v0.0.0-20260101000000-000000000000"}
	files := sourceFiles(t, root)
	if err := modzip.Create(&zbuf, probe, files); err != nil {
		t.Fatal(err)
	}
	pin = simPinVersion(zbuf.Bytes())
	zbuf.Reset()
	if err := modzip.Create(&zbuf, module.Version{Path: probe.Path, Version: pin}, files); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	at := filepath.Join(dir, "github.com", "fixrail", "fixrail", "@v")
	publish := func(v string, mod []byte, zip []byte) {
		writeFile(t, filepath.Join(at, v+".info"), `{"Version":"`+v+`","Time":"2026-01-01T00:00:00Z"}`)
		writeFile(t, filepath.Join(at, v+".mod"), string(mod))
		writeFile(t, filepath.Join(at, v+".zip"), string(zip))
	}
	publish(pin, gomod, zbuf.Bytes())

	// The decoy: a fixrail nobody reviewed, which says so and fails.
	decoy := t.TempDir()
	decoyMod := "module github.com/fixrail/fixrail\n\ngo 1.26\n"
	writeFile(t, filepath.Join(decoy, "go.mod"), decoyMod)
	writeFile(t, filepath.Join(decoy, "cmd", "fixrail", "main.go"), "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() {\n\tfmt.Fprintln(os.Stderr, \"fixrail "+simDecoy+": not the version this workflow pinned\")\n\tos.Exit(1)\n}\n")
	var dbuf bytes.Buffer
	if err := modzip.CreateFromDir(&dbuf, module.Version{Path: probe.Path, Version: simDecoy}, decoy); err != nil {
		t.Fatal(err)
	}
	publish(simDecoy, []byte(decoyMod), dbuf.Bytes())
	writeFile(t, filepath.Join(at, "list"), pin+"\n"+simDecoy+"\n")

	cache := strings.TrimSpace(goEnv(t, "GOMODCACHE"))
	t.Cleanup(func() {
		for _, v := range []string{pin, simDecoy} {
			extracted := filepath.Join(cache, "github.com", "fixrail", "fixrail@"+v)
			filepath.Walk(extracted, func(p string, fi os.FileInfo, err error) error {
				if err == nil && fi.IsDir() {
					os.Chmod(p, 0o755)
				}
				return nil
			})
			os.RemoveAll(extracted)
			for _, ext := range []string{".info", ".mod", ".zip", ".ziphash", ".lock", ".partial"} {
				os.Remove(filepath.Join(cache, "cache", "download", "github.com", "fixrail", "fixrail", "@v", v+ext))
			}
		}
	})
	return dir, pin
}

func goEnvIn(t *testing.T, dir, name string) string {
	cmd := exec.Command("go", "env", name)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// simEvent is the issues.labeled payload: a maintainer labels issue 42.
func simEvent() map[string]any {
	var ev map[string]any
	json.Unmarshal([]byte(`{"action":"labeled","label":{"name":"fixrail"},"issue":{"number":42,"title":"shout crashes on None","body":"shout(None) raises AttributeError: 'NoneType' object has no attribute 'upper'","state":"open","labels":[{"name":"bug"},{"name":"fixrail"}],"user":{"login":"reporter"},"updated_at":"2026-11-30T10:00:00Z"},"sender":{"login":"maint"},"repository":{"full_name":"o/r","default_branch":"main"}}`), &ev)
	return ev
}

// simGitHub is the fake API for one issue run. strict: every request is
// expected exactly as a DRAFT-PR run makes it; otherwise each may or may
// not come (a run that stops early), and only an unexpected or forbidden
// one fails.
func simGitHub(tb testing.TB, strict bool) *githubtest.Server {
	srv := githubtest.New(tb)
	simIssueRun(srv, strict, simIssue{Number: 42, PR: 43, Title: "shout crashes on None", Body: "shout(None) raises AttributeError: 'NoneType' object has no attribute 'upper'"})
	return srv
}

// simIssue is an issue of o/r labelled fixrail, and the number of the PR
// a run that fixes it opens.
type simIssue struct {
	Number, PR  int
	Title, Body string
	// NoEvent: the run names the issue by flag with no event payload
	// (a sweep's fix job), so it reads the issue at intake and again
	// at the open-work gate, and has no sender whose access to check.
	NoEvent bool
}

// simIssueRun expects what one run of `fixrail run --issue N` asks of the
// API (see simGitHub). Runs one after another on one server each add
// their own expectations; the fake answers the first unused one.
func simIssueRun(srv *githubtest.Server, strict bool, is simIssue) {
	n, pr := strconv.Itoa(is.Number), strconv.Itoa(is.PR)
	on := func(method, path string, status int, body string) *githubtest.Expectation {
		e := srv.On(method, path).Reply(status, body)
		if !strict {
			e.AnyTimes()
		}
		return e
	}
	issue, _ := json.Marshal(map[string]any{"author_association": "NONE", "body": is.Body, "comments": 0, "created_at": "2026-11-30T09:00:00Z",
		"html_url": "https://github.com/o/r/issues/" + n, "labels": []any{map[string]any{"name": "bug"}, map[string]any{"name": "fixrail"}},
		"locked": false, "number": is.Number, "state": "open", "title": is.Title, "updated_at": "2026-11-30T10:00:00Z",
		"user": map[string]any{"login": "reporter", "type": "User"}})
	if !is.NoEvent {
		// The event's sender (who labelled the issue) must have write
		// access; a run by number has no sender to check.
		on("GET", "/repos/o/r/collaborators/maint/permission", 200, `{"permission":"admin","role_name":"admin","user":{"login":"maint"}}`)
	}
	on("GET", "/repos/o/r/collaborators/reporter/permission", 200, `{"permission":"write","role_name":"write","user":{"login":"reporter"}}`)
	on("GET", "/repos/o/r/issues/"+n+"/comments", 200, `[]`)
	on("GET", "/repos/o/r/branches/main", 200, `{"commit":{"sha":"1111111111111111111111111111111111111111"},"name":"main","protected":true}`)
	on("GET", "/repos/o/r/rules/branches/main", 200, `[{"parameters":{"required_approving_review_count":1},"ruleset_id":42,"ruleset_source":"o/r","ruleset_source_type":"Repository","type":"pull_request"}]`)
	if pulls := on("GET", "/repos/o/r/pulls", 200, `[]`).Query("state", "open"); strict {
		pulls.Times(2)
	}
	on("GET", "/repos/o/r/branches/fixrail/gh-"+n, 404, `{"message":"Not Found"}`)
	if get := on("GET", "/repos/o/r/issues/"+n, 200, string(issue)); strict && is.NoEvent {
		get.Times(2)
	}
	// P1's access probes, refused for their content: the token may open
	// PRs and comment. (Not strict: every POST /pulls is the probe's, as
	// no run that stops early gets to open one.)
	on("POST", "/repos/o/r/pulls", 422, githubtest.HeadInvalid)
	on("POST", "/repos/o/r/issues/"+n+"/comments", 422, githubtest.CommentBodyMissing)
	if !strict {
		// A run that stops with ESCALATE, NOT-REPRO or a HALT it can say
		// on the issue labels there (the comment is the probe's expectation).
		srv.On("POST", "/repos/o/r/issues/"+n+"/labels").Reply(200, `[]`).AnyTimes()
		return
	}
	on("POST", "/repos/o/r/pulls", 201, `{"base":{"ref":"main"},"draft":true,"head":{"ref":"fixrail/gh-`+n+`","repo":{"full_name":"o/r"}},"html_url":"https://github.com/o/r/pull/`+pr+`","number":`+pr+`,"state":"open","title":"fixrail"}`).
		Check(func(t testing.TB, body []byte) {
			var req struct {
				Draft *bool  `json:"draft"`
				Head  string `json:"head"`
			}
			if json.Unmarshal(body, &req) != nil || req.Draft == nil || !*req.Draft || req.Head != "fixrail/gh-"+n {
				t.Errorf("POST /pulls is not a draft of fixrail/gh-%s: %s", n, body)
			}
		})
	srv.On("POST", "/repos/o/r/labels").Reply(422, `{"message":"Validation Failed","errors":[{"resource":"Label","code":"already_exists","field":"name"}]}`).AnyTimes()
	on("POST", "/repos/o/r/issues/"+pr+"/labels", 200, `[{"name":"fixrail"}]`)
	on("GET", "/repos/o/r/commits/{sha}/check-runs", 200, `{"check_runs":[{"app":{"slug":"github-actions"},"conclusion":"success","head_sha":"","id":1,"name":"test","status":"completed"}],"total_count":1}`)
	on("GET", "/repos/o/r/commits/{sha}/status", 200, `{"state":"pending","statuses":[],"total_count":0}`)
	// The PR read back after the CI wait, still as opened.
	on("GET", "/repos/o/r/pulls/"+pr, 200, `{"base":{"ref":"main"},"body":"## Draft fix","draft":true,"head":{"ref":"fixrail/gh-`+n+`"},"number":`+pr+`,"state":"open"}`)
}

// TestReferenceWorkflowRuns runs the workflow `fixrail init` writes, pinned
// to this source tree, as a hosted runner would, to a pushed branch and a
// draft PR; then removes each of its essentials in turn and requires the
// job to fail, for the reason that essential is there.
func TestReferenceWorkflowRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fixrail from the simulated module proxy")
	}
	proxy, pin := simProxy(t)
	wf := string(pinWorkflow(conformance.ReferenceWorkflow, pin))
	if fs := conformance.Lint("fixrail.yml", []byte(wf), conformance.Options{NoIgnores: true}); len(fs) > 0 {
		t.Fatalf("the pinned workflow has lint findings: %+v", fs)
	}

	t.Run("as written", func(t *testing.T) {
		j := newSimJob(t, proxy)
		j.apiURL = strings.TrimSuffix(simGitHub(t, true).URL(), "/")
		j.repository()
		start := time.Now()
		res := j.run([]byte(wf), "issues", simEvent())
		t.Logf("job took %v", time.Since(start).Round(time.Second))
		if res.failedStep != "" {
			t.Fatalf("step %q failed:\n%s", res.failedStep, res.log)
		}
		if !strings.Contains(res.log, "DRAFT-PR") {
			t.Errorf("the run did not end DRAFT-PR:\n%s", res.log)
		}
		if _, err := os.Stat(filepath.Join(j.dir, "agent", "investigate.prompt")); err != nil {
			t.Errorf("the agent's prompt is not where the falsifications look for it: %v", err)
		}
		refs := j.git(j.remote, "for-each-ref", "--format=%(refname)", "refs/heads")
		if !strings.Contains(refs, "refs/heads/fixrail/gh-42\n") {
			t.Errorf("fixrail/gh-42 was not pushed; remote has:\n%s\nlog:\n%s", refs, res.log)
		}
		// The token never reached the clone's config.
		cfg, err := os.ReadFile(filepath.Join(j.workspace, ".git", "config"))
		if err != nil || bytes.Contains(cfg, []byte(simToken)) || bytes.Contains(cfg, []byte("extraheader")) {
			t.Errorf(".git/config holds a credential (err %v):\n%s", err, cfg)
		}
		// The push went through the helper: an unauthenticated try, then
		// the authenticated receive-pack.
		if !strings.Contains(j.gitlog.String(), "ok POST /o/r/git-receive-pack") {
			t.Errorf("no authenticated push reached the remote:\n%s", j.gitlog)
		}
	})

	// Each essential removed; the job must fail, and fail for that reason.
	for _, tc := range []struct {
		name, old, new string
		step, why      string
		noAgent        bool // the run must end before any agent ran
	}{
		{
			// P1's access check finds the push has no credential, before
			// any agent runs (it used to be forge-error after all of it).
			name: "no push credential",
			old:  wf[strings.Index(wf, "      - name: Push credential\n"):strings.Index(wf, "      - name: Budget precheck\n")],
			new:  "",
			step: "fixrail run", why: "HALT (token-lacks-permission): token-access: the token lacks contents: write (git push --dry-run to " + "http://127.0.0.1",
			noAgent: true,
		},
		{
			name: "no bubblewrap",
			old:  "          sudo apt-get install -y -q bubblewrap\n",
			new:  "",
			step: "Install bubblewrap", why: "bwrap: command not found",
		},
		{
			// The whole step: fixrail.yaml's sandbox: required is then
			// what stops the run, before any agent or test runs.
			name: "no bubblewrap step",
			old:  wf[strings.Index(wf, "      - name: Install bubblewrap\n"):strings.Index(wf, "      - name: Push credential\n")],
			new:  "",
			step: "fixrail run", why: "HALT (no-sandbox)",
		},
		{
			name: "fixrail not pinned",
			old:  `fixrail/cmd/fixrail@$FIXRAIL_VERSION"`,
			new:  `fixrail/cmd/fixrail@latest"`,
			step: "Budget precheck", why: "fixrail " + simDecoy + ": not the version this workflow pinned",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(wf, tc.old) {
				t.Fatalf("the workflow no longer holds %q", tc.old)
			}
			mutated := strings.Replace(wf, tc.old, tc.new, 1)
			j := newSimJob(t, proxy)
			tb := &scriptTB{}
			j.apiURL = strings.TrimSuffix(simGitHub(tb, false).URL(), "/")
			j.repository()
			res := j.run([]byte(mutated), "issues", simEvent())
			for _, c := range tb.cleanups {
				c()
			}
			for _, e := range tb.errs {
				t.Errorf("fake GitHub: %s", e)
			}
			t.Logf("failed at %q", res.failedStep)
			if res.failedStep == "" {
				t.Fatalf("the job passed without it:\n%s", res.log)
			}
			if tc.step != "" && res.failedStep != tc.step {
				t.Errorf("failed at step %q, want %q:\n%s", res.failedStep, tc.step, res.log)
			}
			if !strings.Contains(res.log, tc.why) {
				t.Errorf("the log does not say %q:\n%s", tc.why, res.log)
			}
			if refs := j.git(j.remote, "for-each-ref", "--format=%(refname)", "refs/heads"); strings.Contains(refs, "fixrail/") {
				t.Errorf("a fixrail branch reached the remote:\n%s", refs)
			}
			if _, err := os.Stat(filepath.Join(j.dir, "agent", "investigate.prompt")); tc.noAgent && err == nil {
				t.Errorf("the agent ran before the run stopped:\n%s", res.log)
			}
		})
	}
}

// sourceFiles lists the module's source as git sees it — tracked files and
// untracked ones it does not ignore, as they are in the work tree — so what
// a clone holds besides (the .tools the tests install, build output) never
// enters the published zip. modzip omits nested modules itself.
func sourceFiles(t *testing.T, root string) []modzip.File {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("list the module's files: %v", err)
	}
	var files []modzip.File
	for _, rel := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if rel == "" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(root, rel)); err != nil {
			continue // tracked, deleted in the work tree
		}
		files = append(files, srcFile{root: root, rel: filepath.ToSlash(rel)})
	}
	return files
}

type srcFile struct{ root, rel string }

func (f srcFile) Path() string                 { return f.rel }
func (f srcFile) Lstat() (os.FileInfo, error)  { return os.Lstat(filepath.Join(f.root, f.rel)) }
func (f srcFile) Open() (io.ReadCloser, error) { return os.Open(filepath.Join(f.root, f.rel)) }
