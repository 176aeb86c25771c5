// Package config owns fixrail.yaml: its schema, its defaults and the strict
// parse that rejects unknown keys. fixrail reads the file from the base
// branch, never from a working tree the agent could have written, so the
// commands the harness executes are the operator's.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/fixrail/fixrail/internal/forge"
	"github.com/fixrail/fixrail/internal/pathguard"
	"github.com/fixrail/fixrail/internal/sandbox"
	"github.com/fixrail/fixrail/internal/sandbox/egress"
)

// FileName is the configuration file at the repository root.
const FileName = "fixrail.yaml"

// Config is the whole of fixrail.yaml.
type Config struct {
	Runner    Runner    `yaml:"runner"`
	Test      Test      `yaml:"test"`
	Suite     Suite     `yaml:"suite"`
	Paths     Paths     `yaml:"paths"`
	Budget    Budget    `yaml:"budget"`
	Ledger    Ledger    `yaml:"ledger"`
	Risk      Risk      `yaml:"risk"`
	Untrusted Untrusted `yaml:"untrusted"`
	Redact    Redact    `yaml:"redact"`
	Git       Git       `yaml:"git"`
	Forge     Forge     `yaml:"forge"`
	Recheck   Recheck   `yaml:"recheck"`
	// Model is the single-shot model the LLM validation gate and the impact
	// analysis ask; with none, both record "unconfirmed" and every PR is
	// labelled needs-review.
	Model Model `yaml:"model"`
	// Sandbox is where test, suite and build commands run: auto (bubblewrap
	// when usable, else unsandboxed and said so in the PR), required (HALT
	// no-sandbox without it) or off. The file says it either as a scalar
	// (`sandbox: required`) or as a mapping (`sandbox: {mode: required,
	// ro_paths: [...]}`, mode defaulting to auto); either way the mode
	// lands here.
	Sandbox string `yaml:"sandbox"`
	// SandboxROPaths are sandbox.ro_paths: host directories a sandboxed
	// command sees read-only besides the detected dependency caches
	// (sandbox.Toolchains). Absolute, clean, never / or the operator's
	// home, never a credential location.
	SandboxROPaths []string `yaml:"-"`
	// ExtraEnv names further variables the test and suite commands inherit.
	// Credential-shaped and code-injection names are refused.
	ExtraEnv []string `yaml:"extra_env"`
	Mode     Mode     `yaml:"mode"`
	// Scanners are the scanners fixrail may run as a fix type's oracle,
	// and the map from a SARIF tool's name to the fix type its results
	// take.
	Scanners []Scanner `yaml:"scanners"`
	// Orca is where fixrail reads Orca Security alerts (scan --orca).
	Orca Orca `yaml:"orca"`
}

// Orca names the Orca serving-layer API and the repository as Orca's
// inventory knows it. The token is never here: ORCA_API_TOKEN.
type Orca struct {
	// URL is the API's base, https://api.orcasecurity.io by default; a
	// region's host is its own (Orca does not publish them: copy it from
	// the console). Only https, or http to a loopback address (a test's
	// stand-in).
	URL string `yaml:"url"`
	// Repository is the code repository's name in Orca's inventory
	// (owner/name).
	Repository string `yaml:"repository"`
}

// DefaultOrcaURL is Orca's API when orca.url names none.
const DefaultOrcaURL = "https://api.orcasecurity.io"

// Scanner is one scanner fixrail may run in the sandbox (no network, its
// rule packs read-only) and whose SARIF it reads.
type Scanner struct {
	// Name identifies the scanner in reports and events.
	Name string `yaml:"name"`
	// Command is argv; "{paths}" expands to the files to scan (one
	// argument each) and "{sarif}" to the file the scanner writes its
	// SARIF log to.
	Command []string `yaml:"command"`
	// Timeout bounds one run of the scanner.
	Timeout time.Duration `yaml:"timeout"`
	// Tools are the SARIF tool.driver.name values this scanner answers
	// for: a result from one of them is judged by running this scanner.
	Tools []string `yaml:"tools"`
	// FixType is the fix type the scanner's results take (sast, secret,
	// iac).
	FixType string `yaml:"fix_type"`
}

// Model configures single-shot model calls (no tools, one turn). API keys
// come from the environment only: ANTHROPIC_API_KEY or OPENAI_API_KEY.
type Model struct {
	// Kind is anthropic, openai (any OpenAI-compatible endpoint) or claude
	// (the claude CLI with no tools); empty means no model.
	Kind    string        `yaml:"kind"`
	Model   string        `yaml:"model"`
	BaseURL string        `yaml:"base_url"`
	Binary  string        `yaml:"binary"`
	Timeout time.Duration `yaml:"timeout"`
}

// Untrusted bounds the attacker-controllable text that reaches a prompt.
type Untrusted struct {
	// FieldCap is the most bytes of one field (title, body, each comment)
	// a prompt carries; the cut is marked.
	FieldCap int `yaml:"field_cap"`
}

// Redact configures what is scrubbed besides the harness's own secrets.
type Redact struct {
	// CustomerIDsFile names a file on the operator's machine, outside the
	// repository, listing customer identifiers one per line. They are
	// redacted from prompts and block any outbound text that carries them.
	CustomerIDsFile string `yaml:"customer_ids_file"`
}

// Runner says which agent runs the two invocations.
type Runner struct {
	// Kind is the adapter: "command" runs Command with the runner
	// contract; "claude" runs Claude Code inside the phase rails; "codex"
	// is recognised and refused when the run starts, naming the
	// capabilities Codex lacks (the portability precondition).
	Kind string `yaml:"kind"`
	// Command is argv, run with the finding's worktree as its directory
	// (kind command only).
	Command []string `yaml:"command"`
	// Binary is the agent CLI for kind claude or codex: a path, or a name
	// looked up in PATH. Default: the kind's name.
	Binary string `yaml:"binary"`
	// Model is passed to the agent CLI's --model (kind claude or codex);
	// empty leaves the CLI's default.
	Model string `yaml:"model"`
	// Timeout bounds each invocation (the run's wall clock bounds both).
	Timeout time.Duration `yaml:"timeout"`
	// MaxTurns is passed to adapters that can cap turns; the command runner
	// receives it as FIXRAIL_MAX_TURNS and cannot be held to it.
	MaxTurns int `yaml:"max_turns"`
	// ROPaths and RWPaths are absolute paths the command runner's agent
	// sees inside its sandbox besides the worktree and the hand-off
	// directory: its own install (read-only), a state directory it needs
	// (read-write). Kind command only; the claude adapter sets its own.
	ROPaths []string `yaml:"ro_paths"`
	RWPaths []string `yaml:"rw_paths"`
	// Egress is the allowlist of host:port the agent may reach through
	// fixrail's egress proxy, its only way out of the sandbox. nil (the
	// key absent) is the runner kind's model API (runner.DefaultEgress);
	// an empty list is nothing at all. Every entry is checked at load.
	Egress []string `yaml:"egress"`
	// EgressMaxBytes and EgressMaxConnections are the run's egress caps
	// (bytes both ways, requests); 0 is the proxy's default.
	EgressMaxBytes       int64 `yaml:"egress_max_bytes"`
	EgressMaxConnections int   `yaml:"egress_max_connections"`
	// Network is the removed runner.network key: present at all, it is a
	// configuration error naming runner.egress.
	Network *bool `yaml:"network"`
}

// EgressTargets is runner.egress parsed (Validate has checked it), or nil
// when the key is absent.
func (r Runner) EgressTargets() []egress.Target {
	if r.Egress == nil {
		return nil
	}
	out := make([]egress.Target, 0, len(r.Egress))
	for _, s := range r.Egress {
		if t, err := egress.ParseTarget(s); err == nil {
			out = append(out, t)
		}
	}
	return out
}

// Git configures what fixrail accepts of the clone's own git config.
type Git struct {
	// AllowConfig pins the local config keys that name a program (filters,
	// drivers, helpers) or include another file (include.path,
	// includeIf.*.path) to the one value the operator accepts for each, as
	// key=value, e.g. "filter.lfs.process=git-lfs filter-process". Any
	// other such key or value refuses the clone: it may have been planted
	// by code that ran in it, or come from a tracked file a commit changed.
	AllowConfig []string `yaml:"allow_config"`
}

// ConfigPin is one git.allow_config entry: Key as git config --list prints
// it (section and variable name lower-case, subsection as written) and the
// exact Value.
type ConfigPin struct {
	Key, Value string
}

// Pins returns git.allow_config parsed; Parse has already refused an entry
// that does not parse.
func (g Git) Pins() []ConfigPin {
	pins := make([]ConfigPin, 0, len(g.AllowConfig))
	for _, s := range g.AllowConfig {
		if p, err := ParseConfigPin(s); err == nil {
			pins = append(pins, p)
		}
	}
	return pins
}

// ParseConfigPin reads one git.allow_config entry, key=value, split at the
// first '=' (as git -c splits). A key alone is the format before values
// were pinned, and an error that says so.
func ParseConfigPin(s string) (ConfigPin, error) {
	key, value, ok := strings.Cut(s, "=")
	if !ok {
		return ConfigPin{}, fmt.Errorf("git.allow_config: %q is a key alone; an entry is key=value, the one value the clone may hold for it (e.g. \"filter.lfs.process=git-lfs filter-process\"; git config --get-all %s shows it)", s, s)
	}
	first, last := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
	if first <= 0 || last == len(key)-1 || !configName(key[:first], false) || !configName(key[last+1:], true) ||
		strings.ContainsAny(key[first:last], "\n\x00") || strings.ContainsRune(value, 0) {
		return ConfigPin{}, fmt.Errorf("git.allow_config: %q is not key=value with a git config key (section.name or section.subsection.name)", s)
	}
	return ConfigPin{Key: strings.ToLower(key[:first]) + key[first:last] + strings.ToLower(key[last:]), Value: value}, nil
}

// configName accepts a git config section (letters, digits, '-') or
// variable name (the same, starting with a letter).
func configName(s string, variable bool) bool {
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case (c >= '0' && c <= '9' || c == '-') && !(variable && i == 0):
		default:
			return false
		}
	}
	return s != ""
}

// Forge configures what fixrail asks of the forge it publishes to (GitHub;
// the local outbox has no protection and no CI). Optional.
type Forge struct {
	// CIWait bounds the wait for the draft PR's checks (default 30m).
	CIWait time.Duration `yaml:"ci_wait"`
	// RequiredChecks must be required by the base branch's protection and
	// must pass on the PR. An entry is a check's name, from any app, or
	// name@app-slug: only that GitHub App's check run counts (any app with
	// checks:write, a workflow's token among them, can post a run of any
	// name). An entry with an "@" splits at its last one, and what follows
	// must be an app slug ([a-z0-9-]) or "*" (any app: how a name holding
	// an "@" is written, "build (node@18)@*"). A name with no app that
	// more than one source reports green does not pass; a check the
	// branch's protection pins to an app counts only from that app.
	RequiredChecks []string `yaml:"required_checks"`
	// PushTo is "owner/name" of a fork the branch is pushed to and the
	// draft opened from, so the PR's workflows run as a fork's do (no
	// repository secrets, a read-only token); empty pushes to the
	// repository itself.
	PushTo string `yaml:"push_to"`
}

// Recheck is the scanner re-check after the draft PR exists: the named
// check runs on the PR's head are watched, and findings they annotate go
// back to the fix phase as evidence for a follow-up commit on the same
// branch. Optional: with no checks named there is no recheck.
type Recheck struct {
	// Checks are the check runs to watch (a code-scanning tool's, or any
	// check's): a name, matched exactly, from any app, or name@app-slug
	// (CodeQL@github-advanced-security): only that GitHub App's runs
	// count, and runs of the name from other apps are listed, not counted.
	// An entry with an "@" splits at its last one, and what follows must
	// be an app slug ([a-z0-9-]) or "*" (any app: how a name holding an
	// "@" is written). A name with no app that more than one app reports
	// green is not green; a red from any app is red.
	Checks []string `yaml:"checks"`
	// Wait bounds each wait for the watched checks (default forge.ci_wait).
	Wait time.Duration `yaml:"wait"`
	// MaxRetries is how many follow-up fixes a run may make (default 1);
	// each is reserved in the ledger before it starts. 0 makes none.
	MaxRetries *int `yaml:"max_retries"`
	// OnFailure is what a run does when the checks still report findings
	// after the retries: escalate (ESCALATE recheck-failed, exit 5) or
	// label (the draft stays, labelled needs-review, exit 0).
	OnFailure string `yaml:"on_failure"`
}

// The endings recheck.on_failure names.
const (
	RecheckEscalate = "escalate"
	RecheckLabel    = "label"
)

// DefaultRecheckRetries is recheck.max_retries' default.
const DefaultRecheckRetries = 1

// WaitOr is recheck.wait, or ciWait (forge.ci_wait) when unset.
func (r Recheck) WaitOr(ciWait time.Duration) time.Duration {
	if r.Wait > 0 {
		return r.Wait
	}
	return ciWait
}

// Retries is recheck.max_retries, or its default.
func (r Recheck) Retries() int {
	if r.MaxRetries == nil {
		return DefaultRecheckRetries
	}
	return *r.MaxRetries
}

// DefaultCIWait is forge.ci_wait's default.
const DefaultCIWait = 30 * time.Minute

// Test is the reproducing test's oracle command.
type Test struct {
	// Command is argv; "{test_path}", "{test_name}" and "{test_dir}" (the
	// test's directory) are filled from PLAN.json.
	Command []string `yaml:"command"`
	// PathGlob is where phase 1 may write the reproducing test.
	PathGlob string `yaml:"path_glob"`
	// Timeout bounds each run of the test command.
	Timeout time.Duration `yaml:"timeout"`
}

// Suite is the project's existing test suite, which must stay green.
type Suite struct {
	Command []string      `yaml:"command"`
	Timeout time.Duration `yaml:"timeout"`
}

// Paths says where a fix may write.
type Paths struct {
	// Fixable globs: a path matching neither these nor the deny list is unknown,
	// and unknown is treated as sensitive.
	Fixable []string `yaml:"fixable"`
	// Sensitive globs extend the built-in deny list; they cannot shrink it.
	Sensitive []string `yaml:"sensitive"`
}

// Budget caps one run, and (through the ledger) every run of a UTC day.
// An unreadable budget is an exceeded budget.
type Budget struct {
	MaxDiffLines int `yaml:"max_diff_lines"`
	// MaxDiffBytes bounds the bytes of the added and deleted lines, so a
	// few lines cannot carry a file's worth of code; MaxLineBytes bounds
	// the longest added line, so nothing hides past a diff view's edge.
	MaxDiffBytes int           `yaml:"max_diff_bytes"`
	MaxLineBytes int           `yaml:"max_line_bytes"`
	WallClock    time.Duration `yaml:"wall_clock"`
	// RunCostUSD is reserved against every day scope when a run starts
	// and is the cost cap the runner stops at.
	RunCostUSD float64 `yaml:"run_cost_usd"`
	// Day caps all runs the ledger sees (global), RepoDay each repository,
	// ActorDay each triggering actor, per UTC day.
	Day      DayCaps `yaml:"day"`
	RepoDay  DayCaps `yaml:"repo_day"`
	ActorDay DayCaps `yaml:"actor_day"`
	// Concurrent caps the runs in flight at once.
	Concurrent Concurrent `yaml:"concurrent"`
}

// DayCaps bound one scope for one UTC day: dollars (settled cost plus the
// caps of runs in flight), runs started (every terminal counts,
// escalations too) and model turns. There is no "unlimited": every cap is
// positive.
type DayCaps struct {
	CostUSD float64 `yaml:"cost_usd"`
	Runs    int     `yaml:"runs"`
	Turns   int     `yaml:"turns"`
}

// Concurrent caps runs in flight, across the ledger and per repository.
type Concurrent struct {
	Global int `yaml:"global"`
	Repo   int `yaml:"repo"`
}

// Ledger is where budgets, reservations and in-flight runs are kept.
type Ledger struct {
	// URL is empty (.fixrail/state.db), a SQLite path (absolute, or
	// relative to .fixrail) or sqlite://<path>, or postgres://… for a
	// ledger shared by a fleet. A password never goes here: pgx reads
	// PGPASSWORD or ~/.pgpass.
	URL string `yaml:"url"`
	// Lease is how long a run holds its reservation without renewing it;
	// a holder that vanished is charged when it ends. Zero means
	// budget.wall_clock plus 10 minutes.
	Lease time.Duration `yaml:"lease"`
}

// Risk configures intake risk routing, which only ever raises risk.
type Risk struct {
	// Labels and Keywords extend the built-in high-risk sets; they cannot
	// shrink them.
	Labels   []string `yaml:"labels"`
	Keywords []string `yaml:"keywords"`
	// FixWithoutWrite lets a report from someone without write access be
	// fixed, not only investigated.
	FixWithoutWrite bool `yaml:"fix_without_write"`
}

// LeaseOrDefault is ledger.lease, or its default.
func (c *Config) LeaseOrDefault() time.Duration {
	if c.Ledger.Lease > 0 {
		return c.Ledger.Lease
	}
	return c.Budget.WallClock + 10*time.Minute
}

// Mode is autonomous or interactive; they differ only by the confirm step.
type Mode string

// The two modes.
const (
	Autonomous  Mode = "autonomous"
	Interactive Mode = "interactive"
)

// Defaults fill keys the file leaves out. Nothing here widens what a fix may
// touch: paths.fixable has no default, so an unconfigured project escalates.
func defaults() Config {
	return Config{
		Runner:  Runner{Kind: "command", Timeout: 10 * time.Minute, MaxTurns: 40},
		Test:    Test{Timeout: 5 * time.Minute},
		Suite:   Suite{Timeout: 15 * time.Minute},
		Forge:   Forge{CIWait: DefaultCIWait},
		Recheck: Recheck{OnFailure: RecheckEscalate},
		// The day caps let a team try fixrail for a day: 20 runs an actor,
		// 50 a repository and the whole ledger. Each dollar and turn cap is
		// its run cap times the run's ($5, 40 turns), so a scope fills at
		// the same run count whether the runner reports a cost (claude) or
		// is charged its caps for want of one (command).
		Budget: Budget{MaxDiffLines: 200, MaxDiffBytes: 32 << 10, MaxLineBytes: 500, WallClock: 30 * time.Minute, RunCostUSD: 5,
			Day:        DayCaps{CostUSD: 250, Runs: 50, Turns: 2000},
			RepoDay:    DayCaps{CostUSD: 250, Runs: 50, Turns: 2000},
			ActorDay:   DayCaps{CostUSD: 100, Runs: 20, Turns: 800},
			Concurrent: Concurrent{Global: 4, Repo: 2}},
		Untrusted: Untrusted{FieldCap: 4096},
		Sandbox:   "auto",
		Mode:      Autonomous,
	}
}

// Error is a problem with the configuration file. It names the file and,
// where known, the line.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Parse decodes and validates a fixrail.yaml. name is used in errors only.
func Parse(name string, data []byte) (*Config, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: name, Msg: "file is empty"}
		}
		return nil, &Error{File: name, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	if doc.Kind != yaml.MappingNode {
		return nil, &Error{File: name, Line: doc.Line, Msg: "top level must be a mapping of keys"}
	}
	roPaths, err := takeSandboxMapping(name, doc)
	if err != nil {
		return nil, err
	}
	if err := checkKeys(name, "", doc, reflect.TypeOf(Config{})); err != nil {
		return nil, err
	}
	cfg := defaults()
	if err := doc.Decode(&cfg); err != nil {
		return nil, &Error{File: name, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	cfg.SandboxROPaths = roPaths
	if err := cfg.validate(); err != nil {
		return nil, &Error{File: name, Msg: err.Error()}
	}
	return &cfg, nil
}

// sandboxMapping is the mapping form of the sandbox key.
type sandboxMapping struct {
	Mode    string   `yaml:"mode"`
	ROPaths []string `yaml:"ro_paths"`
}

// takeSandboxMapping reads the mapping form of the top-level sandbox key
// (unknown keys refused by name) and puts its mode in its place as a
// scalar, so that the rest of Parse sees the scalar form.
func takeSandboxMapping(file string, doc *yaml.Node) ([]string, error) {
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k, v := doc.Content[i], doc.Content[i+1]
		if k.Value != "sandbox" || v.Kind != yaml.MappingNode {
			continue
		}
		if err := checkKeys(file, "sandbox", v, reflect.TypeOf(sandboxMapping{})); err != nil {
			return nil, err
		}
		var m sandboxMapping
		if err := v.Decode(&m); err != nil {
			return nil, &Error{File: file, Line: v.Line, Msg: "sandbox: " + strings.TrimPrefix(err.Error(), "yaml: ")}
		}
		if m.Mode == "" {
			m.Mode = string(sandbox.Auto)
		}
		doc.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: m.Mode, Line: v.Line, Column: v.Column}
		return m.ROPaths, nil
	}
	return nil, nil
}

// checkKeys walks the YAML mapping against the struct's yaml tags so that an
// unknown key is an error naming the key, its parent and its line: a typo in
// a safety setting must not silently fall back to a default.
func checkKeys(file, parent string, n *yaml.Node, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	// A list of mappings (scanners:) has its entries' keys checked too.
	if t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode {
		for i, item := range n.Content {
			if err := checkKeys(file, fmt.Sprintf("%s[%d]", parent, i), item, t.Elem()); err != nil {
				return err
			}
		}
		return nil
	}
	if t.Kind() != reflect.Struct || n.Kind != yaml.MappingNode {
		return nil
	}
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if tag != "" && tag != "-" {
			fields[tag] = f.Type
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		ft, ok := fields[k.Value]
		if !ok {
			where := "at top level"
			if parent != "" {
				where = "in " + parent
			}
			return &Error{File: file, Line: k.Line, Msg: fmt.Sprintf("unknown key %q %s (known: %s)", k.Value, where, strings.Join(sortedKeys(fields), ", "))}
		}
		key := k.Value
		if parent != "" {
			key = parent + "." + k.Value
		}
		if err := checkKeys(file, key, v, ft); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys(m map[string]reflect.Type) []string {
	return slices.Sorted(maps.Keys(m))
}

func (c *Config) validate() error {
	if err := c.validateScanners(); err != nil {
		return err
	}
	if err := c.validateOrca(); err != nil {
		return err
	}
	if c.Forge.CIWait <= 0 {
		return errors.New("forge.ci_wait must be a positive duration")
	}
	if _, err := forge.ParseCheckRefs(c.Forge.RequiredChecks); err != nil {
		return fmt.Errorf("forge.required_checks: %w", err)
	}
	if err := c.validateRecheck(); err != nil {
		return err
	}
	if c.Runner.Network != nil {
		return errors.New("runner.network was removed: no agent gets the host's network; it reaches only what runner.egress lists ([host:port, …]) through fixrail's egress proxy, by default the runner kind's model API")
	}
	for _, e := range c.Runner.Egress {
		if _, err := egress.ParseTarget(e); err != nil {
			return fmt.Errorf("runner.egress: %w", err)
		}
	}
	if c.Runner.EgressMaxBytes < 0 || c.Runner.EgressMaxConnections < 0 {
		return errors.New("runner.egress_max_bytes and runner.egress_max_connections must not be negative")
	}
	switch c.Runner.Kind {
	case "command":
		if len(c.Runner.Command) == 0 || c.Runner.Command[0] == "" {
			return errors.New("runner.command is required for runner.kind command")
		}
		for _, list := range []struct {
			key   string
			paths []string
		}{{"runner.ro_paths", c.Runner.ROPaths}, {"runner.rw_paths", c.Runner.RWPaths}} {
			for _, p := range list.paths {
				if !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
					return fmt.Errorf("%s: %q must be a clean absolute path other than /", list.key, p)
				}
			}
		}
		if c.Runner.Binary != "" || c.Runner.Model != "" {
			return errors.New("runner.binary and runner.model are for runner.kind claude or codex; runner.kind command runs runner.command")
		}
	case "claude", "codex":
		if len(c.Runner.ROPaths)+len(c.Runner.RWPaths) > 0 {
			return fmt.Errorf("runner.ro_paths and runner.rw_paths are for runner.kind command")
		}
		if len(c.Runner.Command) > 0 {
			return fmt.Errorf("runner.command is for runner.kind command; runner.kind %s takes runner.binary and runner.model", c.Runner.Kind)
		}
		if c.Runner.Binary == "" {
			c.Runner.Binary = c.Runner.Kind
		}
		if !cliWord(c.Runner.Binary) {
			return fmt.Errorf("runner.binary %q must be a path or a command name, without spaces, not starting with '-'", c.Runner.Binary)
		}
		if c.Runner.Model != "" && !cliWord(c.Runner.Model) {
			return fmt.Errorf("runner.model %q must be a model name, without spaces, not starting with '-'", c.Runner.Model)
		}
	case "":
		return errors.New("runner.kind is required")
	default:
		return fmt.Errorf("runner.kind %q is not supported (supported: command, claude, codex)", c.Runner.Kind)
	}
	// The test section is the bug fix type's: fixtype.Bug checks it when a
	// bug is taken, so a repository configures only the types it uses.
	if len(c.Suite.Command) == 0 || c.Suite.Command[0] == "" {
		return errors.New("suite.command is required: the prior suite must stay green")
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"runner.timeout", c.Runner.Timeout}, {"suite.timeout", c.Suite.Timeout}, {"budget.wall_clock", c.Budget.WallClock}} {
		if d.v <= 0 {
			return fmt.Errorf("%s must be a positive duration such as 10m", d.key)
		}
	}
	if c.Runner.MaxTurns <= 0 {
		return errors.New("runner.max_turns must be positive")
	}
	if c.Untrusted.FieldCap < 256 || c.Untrusted.FieldCap > 1<<20 {
		return errors.New("untrusted.field_cap must be between 256 and 1048576 bytes")
	}
	if f := c.Redact.CustomerIDsFile; f != "" && !filepath.IsAbs(f) {
		return fmt.Errorf("redact.customer_ids_file %q must be an absolute path outside the repository", f)
	}
	switch c.Model.Kind {
	case "", "anthropic", "openai", "claude":
	default:
		return fmt.Errorf("model.kind %q is not supported (anthropic, openai or claude)", c.Model.Kind)
	}
	if _, err := sandbox.ParseMode(c.Sandbox); err != nil {
		return fmt.Errorf("sandbox: %v", err)
	}
	for _, p := range c.SandboxROPaths {
		if err := sandbox.CheckROPath(p); err != nil {
			return err
		}
	}
	if err := sandbox.CheckExtra(c.ExtraEnv...); err != nil {
		return fmt.Errorf("extra_env: %v", err)
	}
	for _, e := range c.Git.AllowConfig {
		if _, err := ParseConfigPin(e); err != nil {
			return err
		}
	}
	if c.Budget.MaxDiffLines <= 0 {
		return errors.New("budget.max_diff_lines must be positive")
	}
	if c.Budget.MaxDiffBytes <= 0 {
		return errors.New("budget.max_diff_bytes must be positive")
	}
	if c.Budget.MaxLineBytes <= 0 {
		return errors.New("budget.max_line_bytes must be positive")
	}
	if err := c.validateLedger(); err != nil {
		return err
	}
	switch c.Mode {
	case Autonomous, Interactive:
	default:
		return fmt.Errorf("mode %q is not valid (autonomous or interactive)", c.Mode)
	}
	return nil
}

// cliWord accepts one command-line word that cannot be read as an option.
func cliWord(s string) bool {
	return s != "" && !strings.HasPrefix(s, "-") && !strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	})
}

// DefaultScannerTimeout bounds a scanner's run when its entry names none.
const DefaultScannerTimeout = 5 * time.Minute

func (c *Config) validateScanners() error {
	names, tools := map[string]bool{}, map[string]string{}
	for i := range c.Scanners {
		sc := &c.Scanners[i]
		key := fmt.Sprintf("scanners[%d]", i)
		if !pathguard.SafeName(sc.Name) {
			return fmt.Errorf("%s.name: %q is not a safe name (letters, digits, '.', '_', '-')", key, sc.Name)
		}
		if names[sc.Name] {
			return fmt.Errorf("%s.name: %q is named twice", key, sc.Name)
		}
		names[sc.Name] = true
		if len(sc.Command) == 0 || sc.Command[0] == "" {
			return fmt.Errorf("%s.command is required (argv, with {paths} and {sarif})", key)
		}
		if !slices.ContainsFunc(sc.Command, func(a string) bool { return strings.Contains(a, "{sarif}") }) {
			return fmt.Errorf("%s.command must name {sarif}, the file the scanner writes its SARIF log to", key)
		}
		switch {
		case sc.Timeout < 0:
			return fmt.Errorf("%s.timeout must be a positive duration", key)
		case sc.Timeout == 0:
			sc.Timeout = DefaultScannerTimeout
		}
		if len(sc.Tools) == 0 {
			return fmt.Errorf("%s.tools: name the SARIF tool names (tool.driver.name) this scanner answers for", key)
		}
		for _, t := range sc.Tools {
			if strings.TrimSpace(t) == "" || len(t) > 255 {
				return fmt.Errorf("%s.tools: %q is not a tool name", key, t)
			}
			if other, dup := tools[strings.ToLower(t)]; dup {
				return fmt.Errorf("%s.tools: %q is already answered for by scanner %q", key, t, other)
			}
			tools[strings.ToLower(t)] = sc.Name
		}
		if !pathguard.SafeName(sc.FixType) {
			return fmt.Errorf("%s.fix_type: %q is not a fix type's name", key, sc.FixType)
		}
	}
	return nil
}

func (c *Config) validateOrca() error {
	o := &c.Orca
	if o.URL == "" {
		return c.validateOrcaRepo()
	}
	u, err := url.Parse(o.URL)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
		return fmt.Errorf("orca.url: %q is not an API base URL (https://host)", o.URL)
	}
	loopback := u.Hostname() == "localhost" || net.ParseIP(u.Hostname()) != nil && net.ParseIP(u.Hostname()).IsLoopback()
	if u.Scheme != "https" && !(u.Scheme == "http" && loopback) {
		return fmt.Errorf("orca.url: %q: https only (the token goes with every request)", o.URL)
	}
	o.URL = strings.TrimSuffix(o.URL, "/")
	return c.validateOrcaRepo()
}

func (c *Config) validateOrcaRepo() error {
	if o := c.Orca; o.Repository != "" {
		owner, name, ok := strings.Cut(o.Repository, "/")
		if !ok || !pathguard.SafeName(owner) || !pathguard.SafeName(name) {
			return fmt.Errorf("orca.repository: %q is not owner/name", o.Repository)
		}
	}
	return nil
}

// OrcaURL is orca.url, or DefaultOrcaURL.
func (c *Config) OrcaURL() string {
	if c.Orca.URL == "" {
		return DefaultOrcaURL
	}
	return c.Orca.URL
}

// ScannerFor returns the scanner that answers for a SARIF tool name
// (compared without case), or nil.
func (c *Config) ScannerFor(tool string) *Scanner {
	for i := range c.Scanners {
		for _, t := range c.Scanners[i].Tools {
			if strings.EqualFold(t, tool) {
				return &c.Scanners[i]
			}
		}
	}
	return nil
}

// validateLedger checks the budget caps, the ledger and the risk sets.
// Every cap must be positive and finite; a zero is refused, not read as
// "unlimited", because a cap that reads as absent fails open.
func (c *Config) validateLedger() error {
	b := c.Budget
	if !positive(b.RunCostUSD) {
		return errors.New("budget.run_cost_usd must be a positive number of dollars")
	}
	for _, d := range []struct {
		key string
		c   DayCaps
	}{{"budget.day", b.Day}, {"budget.repo_day", b.RepoDay}, {"budget.actor_day", b.ActorDay}} {
		switch {
		case !positive(d.c.CostUSD) || d.c.Runs <= 0 || d.c.Turns <= 0:
			return fmt.Errorf("%s: cost_usd, runs and turns must all be positive", d.key)
		case d.c.CostUSD < b.RunCostUSD:
			return fmt.Errorf("%s.cost_usd %g is below budget.run_cost_usd %g: no run could ever start", d.key, d.c.CostUSD, b.RunCostUSD)
		case d.c.Turns < c.Runner.MaxTurns:
			return fmt.Errorf("%s.turns %d is below runner.max_turns %d: no run could ever start", d.key, d.c.Turns, c.Runner.MaxTurns)
		}
	}
	if b.Concurrent.Global <= 0 || b.Concurrent.Repo <= 0 {
		return errors.New("budget.concurrent.global and budget.concurrent.repo must be positive")
	}
	if c.Ledger.Lease < 0 || (c.Ledger.Lease > 0 && c.Ledger.Lease <= c.Budget.WallClock) {
		return fmt.Errorf("ledger.lease %s must be longer than budget.wall_clock %s: a live run must never lose its reservation", c.Ledger.Lease, c.Budget.WallClock)
	}
	if err := checkLedgerURL(c.Ledger.URL); err != nil {
		return fmt.Errorf("ledger.url: %v", err)
	}
	for _, l := range []struct {
		key  string
		list []string
	}{{"risk.labels", c.Risk.Labels}, {"risk.keywords", c.Risk.Keywords}} {
		if len(l.list) > 200 {
			return fmt.Errorf("%s: at most 200 entries", l.key)
		}
		for _, w := range l.list {
			if strings.TrimSpace(w) == "" || len(w) > 64 || strings.ContainsFunc(w, unicode.IsControl) {
				return fmt.Errorf("%s: %q must be 1 to 64 printable characters", l.key, w)
			}
		}
	}
	return nil
}

func positive(f float64) bool { return f > 0 && f < 1e9 }

func checkLedgerURL(u string) error {
	switch {
	case u == "":
		return nil
	case strings.HasPrefix(u, "postgres://"), strings.HasPrefix(u, "postgresql://"):
		rest := u[strings.Index(u, "://")+3:]
		if at := strings.LastIndex(rest, "@"); at >= 0 && strings.Contains(rest[:at], ":") {
			return errors.New("holds a password; fixrail.yaml is committed: set PGPASSWORD or use ~/.pgpass instead")
		}
		if strings.Contains(strings.ToLower(u), "password=") {
			return errors.New("holds a password parameter; set PGPASSWORD or use ~/.pgpass instead")
		}
		return nil
	case strings.Contains(u, "://") && !strings.HasPrefix(u, "sqlite://"):
		return fmt.Errorf("%q: want a path, sqlite://<path> or postgres://…", u)
	}
	p := strings.TrimPrefix(u, "sqlite://")
	if p == "" || strings.ContainsAny(p, "?#") || slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..") || filepath.Clean(p) != p {
		return fmt.Errorf("%q: want a clean path without \"..\", ? or #", u)
	}
	return nil
}

func (c *Config) validateRecheck() error {
	if p := c.Forge.PushTo; p != "" {
		owner, name, ok := strings.Cut(p, "/")
		if !ok || owner == "" || name == "" || strings.ContainsAny(name, "/ ") || strings.ContainsAny(owner, " ") {
			return fmt.Errorf("forge.push_to: %q is not owner/name", p)
		}
	}
	rc := &c.Recheck
	if _, err := forge.ParseCheckRefs(rc.Checks); err != nil {
		return fmt.Errorf("recheck.checks: %w", err)
	}
	if rc.Wait < 0 {
		return errors.New("recheck.wait must be a positive duration")
	}
	if n := rc.Retries(); n < 0 || n > 5 {
		return fmt.Errorf("recheck.max_retries: %d is not between 0 and 5", n)
	}
	switch rc.OnFailure {
	case RecheckEscalate, RecheckLabel:
	default:
		return fmt.Errorf("recheck.on_failure: %q is not escalate or label", rc.OnFailure)
	}
	return nil
}
