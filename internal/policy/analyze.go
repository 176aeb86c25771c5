package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Call is one tool call as the harness reports it.
type Call struct {
	Tool  string          // tool name: Bash, Write, Edit, Read, WebFetch, mcp__server__tool, ...
	Input json.RawMessage // the tool's input object
	Cwd   string          // the session's working directory; "" if unknown
}

// Env describes the machine the call would run on. Zero fields take the
// defaults documented on each field; DefaultEnv fills them from the process.
type Env struct {
	// Home is the agent's home directory, used for ~ and $HOME. Empty means
	// unknown: paths under ~ then cannot be resolved.
	Home string
	// FixrailHome holds policy.json, keys, the nonce store and receipts.
	// Empty means Home/.config/fixrail.
	FixrailHome string
	// FixrailBinaries are the paths of fixrail's own binaries: the hook's,
	// and the fixrail command the owner approves with when the hook is the
	// slim fixrail-hook. Writing one is self-mod (a replaced binary could
	// sign what the owner did not mean to). Empty means none is protected
	// by path (the "fixrail" command name is still recognised).
	FixrailBinaries []string
	// SigningKeys are private key files the owner signs with, where this
	// process can tell ($FIXRAIL_APPROVAL_KEY and $FIXRAIL_ATTEST_KEY in the
	// agent's environment): reading, copying or naming one is self-mod, as
	// reading $FIXRAIL_HOME/keys is, and so is writing one. A key the
	// environment does not name is not known by path (signing with it is
	// still recognised).
	SigningKeys []string
	// ProtectedBranches are the branch names push-protected guards.
	// Nil means main and master.
	ProtectedBranches []string
	// ScratchDirs are the directories a recursive delete may empty without
	// matching destructive. Absolute entries stand for themselves; relative
	// entries are taken relative to Call.Cwd (a build-output directory such as
	// node_modules in the project). Nil means DefaultScratchDirs. TmpDir, when
	// set, is always scratch.
	ScratchDirs []string
	// TmpDir is $TMPDIR as the agent's shell sees it; "" if unset. It resolves
	// $TMPDIR in commands and is scratch.
	TmpDir string
}

// DefaultScratchDirs returns the scratch allowlist used when Env.ScratchDirs is
// nil: the system temporary directories and a few dependency and cache
// directories of the project that a package manager or test runner recreates.
func DefaultScratchDirs() []string {
	return []string{
		"/tmp", "/var/tmp",
		"node_modules", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox",
	}
}

// DefaultEnv returns an Env filled from this process: $HOME, $FIXRAIL_HOME,
// $TMPDIR, the signing keys it names and the running executable.
func DefaultEnv() Env {
	e := Env{Home: os.Getenv("HOME"), FixrailHome: os.Getenv("FIXRAIL_HOME"), TmpDir: os.Getenv("TMPDIR"), SigningKeys: SigningKeysFrom(os.LookupEnv)}
	if exe, err := os.Executable(); err == nil {
		e.FixrailBinaries = []string{exe}
	}
	return e
}

// SigningKeysFrom returns the private key files the environment names for
// fixrail to sign with ($FIXRAIL_APPROVAL_KEY, $FIXRAIL_ATTEST_KEY), made
// absolute.
func SigningKeysFrom(lookup func(string) (string, bool)) []string {
	var out []string
	for _, name := range []string{"FIXRAIL_APPROVAL_KEY", "FIXRAIL_ATTEST_KEY"} {
		v, _ := lookup(name)
		if v == "" {
			continue
		}
		if abs, err := filepath.Abs(v); err == nil {
			out = append(out, abs)
		}
	}
	return out
}

// Match is one rule a call triggers.
type Match struct {
	Rule   Rule
	Reason string // one line, for the denial message and the receipt
	// Unresolvable means the rule could not be decided statically: the
	// command name or an argument the rule depends on is only known at run
	// time ($x, $(...) as the command word, eval of computed text, a shell
	// reading commands from a pipe, source of a file that cannot be read).
	// Decide treats it like a match.
	Unresolvable bool
}

// maxInput bounds the text analysed for one call; larger inputs are
// unresolvable for every rule rather than slow.
const maxInput = 1 << 20

// Analyze reports the rules call c triggers. It returns an error only for
// malformed input: a known tool whose input is not the JSON object that tool
// takes. A Bash command that does not parse is not an error: it is
// Unresolvable for every rule that a command can trigger (all but spend),
// because bash runs the lines before a syntax error. Unknown tools match
// nothing, except the heuristics for MCP tools (see the package doc).
func Analyze(c Call, env Env) ([]Match, error) {
	return analyze(c, env, true)
}

// analyze is Analyze with an option to let panics through, for the fuzz test.
func analyze(c Call, env Env, recoverPanics bool) (ms []Match, err error) {
	a := newAnalyzer(env, c.Cwd)
	if recoverPanics {
		defer func() {
			if r := recover(); r != nil {
				// A bug in the analyser must not turn into "no match": every
				// rule becomes unresolvable, so gate rules still deny.
				a.all(fmt.Sprintf("internal error while analysing the call: %v", r))
				ms, err = a.ms, nil
			}
		}()
	}
	if err := a.tool(c); err != nil {
		return nil, err
	}
	return a.ms, nil
}

// errMalformed marks input that does not have the shape its tool takes.
var errMalformed = errors.New("malformed tool input")

func malformed(tool, why string) error {
	return fmt.Errorf("%w for %s: %s", errMalformed, tool, why)
}

// decodeObject decodes the input of a known tool into a map of raw fields.
func decodeObject(tool string, in json.RawMessage) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(in, &m); err != nil || m == nil {
		return nil, malformed(tool, "input is not a JSON object")
	}
	return m, nil
}

// stringField returns a string field; ok is false when the field is absent
// or null. A field of another type is malformed.
func stringField(tool string, m map[string]json.RawMessage, key string) (s string, ok bool, err error) {
	raw, present := m[key]
	if !present || string(raw) == "null" {
		return "", false, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, malformed(tool, key+" is not a string")
	}
	return s, true, nil
}

func requiredString(tool string, m map[string]json.RawMessage, keys ...string) (string, error) {
	for _, k := range keys {
		s, ok, err := stringField(tool, m, k)
		if err != nil {
			return "", err
		}
		if ok {
			return s, nil
		}
	}
	return "", malformed(tool, "missing "+keys[0])
}

func (a *analyzer) tool(c Call) error {
	switch c.Tool {
	case "Bash", "run_shell_command", "shell", "local_shell", "exec_command":
		return a.bashTool(c)
	case "Write", "Edit", "MultiEdit", "write_file", "replace", "edit_file":
		m, err := decodeObject(c.Tool, c.Input)
		if err != nil {
			return err
		}
		p, err := requiredString(c.Tool, m, "file_path", "path", "absolute_path")
		if err != nil {
			return err
		}
		a.writeFile(word(p), a.toolState(), c.Tool)
	case "NotebookEdit":
		m, err := decodeObject(c.Tool, c.Input)
		if err != nil {
			return err
		}
		p, err := requiredString(c.Tool, m, "notebook_path")
		if err != nil {
			return err
		}
		a.writePath(word(p), a.toolState(), c.Tool)
	case "Read", "read_file":
		m, err := decodeObject(c.Tool, c.Input)
		if err != nil {
			return err
		}
		p, err := requiredString(c.Tool, m, "file_path", "absolute_path", "path")
		if err != nil {
			return err
		}
		a.readPath(word(p), a.toolState(), c.Tool, false)
	case "Grep", "search_file_content":
		m, err := decodeObject(c.Tool, c.Input)
		if err != nil {
			return err
		}
		if p, ok, err := stringField(c.Tool, m, "path"); err != nil {
			return err
		} else if ok {
			// Grep prints file contents, so searching a directory that holds
			// the approval keys reads them.
			a.readPath(word(p), a.toolState(), c.Tool, true)
		}
	case "WebFetch", "web_fetch":
		return a.webFetch(c)
	case "apply_patch":
		m, err := decodeObject(c.Tool, c.Input)
		if err != nil {
			return err
		}
		patch, err := requiredString(c.Tool, m, "command", "input", "patch")
		if err != nil {
			return err
		}
		for _, p := range patchPaths(patch) {
			a.writePath(word(p), a.toolState(), "apply_patch")
		}
	case "PowerShell":
		// Not parsed: a PowerShell command can do anything a Bash one can.
		if _, err := decodeObject(c.Tool, c.Input); err != nil {
			return err
		}
		a.all("PowerShell commands are not analysed")
	default:
		switch {
		case strings.HasPrefix(c.Tool, "mcp__") || strings.HasPrefix(c.Tool, "mcp_"):
			return a.mcp(c)
		case strings.HasPrefix(c.Tool, "Cron") && !strings.Contains(c.Tool, "List"):
			a.add(ScopeEscalation, false, "%s schedules work that runs later", c.Tool)
		}
	}
	return nil
}

func (a *analyzer) bashTool(c Call) error {
	m, err := decodeObject(c.Tool, c.Input)
	if err != nil {
		return err
	}
	raw, ok := m["command"]
	if !ok || string(raw) == "null" {
		return malformed(c.Tool, "missing command")
	}
	if b, ok := m["dangerouslyDisableSandbox"]; ok && string(b) == "true" {
		a.add(ScopeEscalation, false, "runs outside the sandbox (dangerouslyDisableSandbox)")
	}
	var script string
	if err := json.Unmarshal(raw, &script); err == nil {
		a.script(script, a.top(), 0, "")
		return nil
	}
	// Some harnesses send an argv array instead of a shell string.
	var argv []string
	if err := json.Unmarshal(raw, &argv); err != nil {
		return malformed(c.Tool, "command is neither a string nor an array of strings")
	}
	if len(argv) > 0 {
		fs := make([]field, len(argv))
		for i, s := range argv {
			fs[i] = word(s)
		}
		a.command(fs, nil, a.top(), input{}, 0)
	}
	return nil
}

func (a *analyzer) webFetch(c Call) error {
	m, err := decodeObject(c.Tool, c.Input)
	if err != nil {
		return err
	}
	u, err := requiredString(c.Tool, m, "url")
	if err != nil {
		return err
	}
	method, ok, err := stringField(c.Tool, m, "method")
	if err != nil {
		return err
	}
	if ok && !readMethod(method) && !loopbackURL(u) {
		a.add(EgressOther, false, "%s %s %s", c.Tool, strings.ToUpper(method), u)
	}
	return nil
}

func readMethod(m string) bool {
	switch strings.ToUpper(m) {
	case "", "GET", "HEAD", "OPTIONS":
		return true
	}
	return false
}

// patchPaths lists the files a patch in unified-diff or apply_patch format
// touches.
func patchPaths(patch string) []string {
	var out []string
	for line := range strings.Lines(patch) {
		line = strings.TrimRight(line, "\r\n")
		for _, pre := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ", "+++ ", "--- ", "rename to ", "rename from ", "copy to "} {
			if p, ok := strings.CutPrefix(line, pre); ok {
				p = strings.TrimSpace(p)
				if i := strings.IndexByte(p, '\t'); i >= 0 {
					p = p[:i]
				}
				if pre == "+++ " || pre == "--- " {
					if p == "/dev/null" {
						continue
					}
					p = stripPatchPrefix(p)
				}
				if p != "" {
					out = append(out, p)
				}
			}
		}
		if rest, ok := strings.CutPrefix(line, "diff --git "); ok {
			for _, f := range strings.Fields(rest) {
				out = append(out, stripPatchPrefix(f))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// stripPatchPrefix removes the a/ or b/ that git puts before diff paths; the
// path is then taken relative to the working directory (patch -p1).
func stripPatchPrefix(p string) string {
	if len(p) > 2 && (p[0] == 'a' || p[0] == 'b') && p[1] == '/' {
		return p[2:]
	}
	return p
}

// cleanAbs joins p to dir when relative and cleans it; ok is false when p is
// relative and dir is unknown.
func cleanAbs(dir, p string) (string, bool) {
	if filepath.IsAbs(p) {
		return filepath.Clean(p), true
	}
	if dir == "" {
		return "", false
	}
	return filepath.Join(dir, p), true
}
