package cli

import (
	"encoding/json"
	"path"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fixrail/fixrail/internal/gates"
)

// initLayout is what init reads from a repository's tracked files: its
// ecosystem, where its code lives (paths.fixable) and how its tests run.
type initLayout struct {
	// Ecosystem is go, python, npm, or "" when none was recognised.
	Ecosystem string
	// Fixable are the paths.fixable globs: only directories and files
	// that exist, never a guess at a layout the repository does not have.
	Fixable  []string
	Test     []string // test.command
	TestGlob string   // test.path_glob
	Suite    []string // suite.command
	// Notes are what the operator should know or check, one line each.
	Notes []string
}

// skipDir names top-level directories that hold no code a fix should
// write: vendored or generated trees, fixtures, and the hidden ones.
func skipDir(d string) bool {
	switch d {
	case "vendor", "third_party", "node_modules", "testdata", "dist", "build":
		return true
	}
	return strings.HasPrefix(d, ".") || strings.HasPrefix(d, "_")
}

// testDirs are directories that hold tests, never fixable code.
var testDirs = []string{"tests", "test", "__tests__", "spec"}

// detectLayout reads the layout from the tracked files. read returns the
// content of a small tracked file (a manifest), or nil.
func detectLayout(files []string, read func(string) []byte) initLayout {
	has := map[string]bool{}
	for _, f := range files {
		has[f] = true
	}
	var l initLayout
	var others []string
	switch {
	case has["go.mod"]:
		l = goLayout(files, has)
		others = markers(has, "package.json", "pyproject.toml", "setup.py")
	case has["package.json"]:
		l = npmLayout(files, read)
		others = markers(has, "pyproject.toml", "setup.py")
	case pythonProject(files, has):
		l = pythonLayout(files, has, read)
	default:
		l = initLayout{
			Test: []string{"python3", "-m", "pytest", "-q", "{test_path}"}, TestGlob: "tests/**", Suite: []string{"python3", "-m", "pytest", "-q"},
			Notes: []string{"no go.mod, package.json or Python project is tracked: the test and suite commands are a pytest guess; edit them"},
		}
	}
	if len(others) > 0 {
		l.Notes = append(l.Notes, "also tracked: "+strings.Join(others, ", ")+"; a run has one test and one suite command, written here for "+l.Ecosystem)
	}
	if len(l.Fixable) == 0 {
		l.Notes = append(l.Notes, "paths.fixable is empty: no source was found where init looks; until you list the globs a fix may write, every fix escalates")
	}
	return l
}

func markers(has map[string]bool, names ...string) []string {
	var found []string
	for _, n := range names {
		if has[n] {
			found = append(found, n)
		}
	}
	return found
}

// topDirsWith returns the top-level directories (skipDir and test
// directories excluded) holding a tracked file that ok accepts, sorted.
func topDirsWith(files []string, ok func(string) bool) []string {
	var dirs []string
	for _, f := range files {
		top, rest, nested := strings.Cut(f, "/")
		if !nested || skipDir(top) || slices.Contains(testDirs, top) || !ok(rest) {
			continue
		}
		if !slices.Contains(dirs, top) {
			dirs = append(dirs, top)
		}
	}
	slices.Sort(dirs)
	return dirs
}

// rootFiles returns the tracked files at the root that ok accepts, sorted.
func rootFiles(files []string, ok func(string) bool) []string {
	var out []string
	for _, f := range files {
		if !strings.Contains(f, "/") && ok(f) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

// goLayout: a package at the root is "*.go" (the root's files only), each
// top-level directory holding Go code is "dir/**" — cmd/, internal/,
// pkg/ or any other — except a nested module's and vendored code.
func goLayout(files []string, has map[string]bool) initLayout {
	l := initLayout{
		Ecosystem: "go",
		// -count=1: a cached pass is not a run. {test_dir} is the test's
		// package, so only it is built and run.
		Test:     []string{"go", "test", "-count=1", "-run", "^{test_name}$", "./{test_dir}"},
		TestGlob: "{**/*_test.go,**/testdata/**}",
		Suite:    []string{"go", "test", "-count=1", "./..."},
	}
	isGo := func(f string) bool { return strings.HasSuffix(f, ".go") }
	if len(rootFiles(files, func(f string) bool { return isGo(f) && !strings.HasSuffix(f, "_test.go") })) > 0 {
		l.Fixable = append(l.Fixable, "*.go")
	}
	for _, d := range topDirsWith(files, isGo) {
		if has[d+"/go.mod"] {
			l.Notes = append(l.Notes, d+"/ is a module of its own (its go.mod): not made fixable; go test ./... from the root does not test it")
			continue
		}
		l.Fixable = append(l.Fixable, gates.LiteralGlob(d)+"/**")
	}
	return l
}

// pythonProject: a manifest at the root, or Python code anywhere.
func pythonProject(files []string, has map[string]bool) bool {
	if has["pyproject.toml"] || has["setup.py"] || has["setup.cfg"] || has["requirements.txt"] {
		return true
	}
	return slices.ContainsFunc(files, func(f string) bool { return strings.HasSuffix(f, ".py") })
}

// pythonTooling are root modules that configure or drive the project, not
// its code: a fix writing them changes how tests run.
var pythonTooling = []string{"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "tasks.py", "manage.py", "docs_conf.py"}

// pythonLayout: src/ and lib/ when they hold Python, each top-level
// package (a directory with an __init__.py), and each module at the root
// that is not tooling. pytest when the project uses it (a conftest.py, a
// pytest.ini, pytest named in its manifests), else unittest.
func pythonLayout(files []string, has map[string]bool, read func(string) []byte) initLayout {
	l := initLayout{Ecosystem: "python"}
	isPy := func(f string) bool { return strings.HasSuffix(f, ".py") }
	for _, d := range topDirsWith(files, isPy) {
		if d == "src" || d == "lib" || has[d+"/__init__.py"] {
			l.Fixable = append(l.Fixable, gates.LiteralGlob(d)+"/**")
		}
	}
	for _, f := range rootFiles(files, isPy) {
		if !slices.Contains(pythonTooling, f) {
			l.Fixable = append(l.Fixable, gates.LiteralGlob(f))
		}
	}
	testDir := firstDir(files, "tests", "test")
	l.TestGlob = testDir + "/**"
	if usesPytest(files, has, read) {
		l.Test = []string{"python3", "-m", "pytest", "-q", "{test_path}"}
		l.Suite = []string{"python3", "-m", "pytest", "-q"}
	} else {
		l.Test = []string{"python3", "-m", "unittest", "{test_path}"}
		l.Suite = []string{"python3", "-m", "unittest", "discover", "-s", testDir, "-t", "."}
		l.Notes = append(l.Notes, "no pytest configuration is tracked: the test and suite commands use unittest")
	}
	return l
}

func usesPytest(files []string, has map[string]bool, read func(string) []byte) bool {
	if has["pytest.ini"] || slices.ContainsFunc(files, func(f string) bool { return path.Base(f) == "conftest.py" }) {
		return true
	}
	for _, m := range []string{"pyproject.toml", "setup.cfg", "tox.ini", "requirements.txt", "requirements-dev.txt", "requirements_dev.txt", "dev-requirements.txt"} {
		if has[m] && strings.Contains(string(read(m)), "pytest") {
			return true
		}
	}
	return false
}

// firstDir is the first of dirs that holds a tracked file, else dirs[0]:
// where phase 1 writes its test.
func firstDir(files []string, dirs ...string) string {
	for _, d := range dirs {
		if slices.ContainsFunc(files, func(f string) bool { return strings.HasPrefix(f, d+"/") }) {
			return d
		}
	}
	return dirs[0]
}

// npmLayout: src/ and lib/, a workspace's packages/*/src and
// packages/*/lib (packages/** when its packages keep code elsewhere), and
// the scripts at the root that are not tooling configuration. The test
// runner is the one package.json names (jest, vitest, mocha), else
// node --test; the suite is npm test when package.json has a test script.
func npmLayout(files []string, read func(string) []byte) initLayout {
	l := initLayout{Ecosystem: "npm", TestGlob: firstDir(files, "test", "tests", "__tests__") + "/**"}
	isJS := func(f string) bool {
		switch path.Ext(f) {
		case ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx":
			return true
		}
		return false
	}
	under := func(glob string) bool {
		return slices.ContainsFunc(files, func(f string) bool { ok, _ := doublestar.Match(glob, f); return ok && isJS(f) })
	}
	for _, d := range []string{"src", "lib"} {
		if under(d + "/**") {
			l.Fixable = append(l.Fixable, d+"/**")
		}
	}
	if under("packages/**") {
		n := len(l.Fixable)
		for _, g := range []string{"packages/*/src/**", "packages/*/lib/**"} {
			if under(g) {
				l.Fixable = append(l.Fixable, g)
			}
		}
		if len(l.Fixable) == n {
			l.Fixable = append(l.Fixable, "packages/**")
		}
	}
	for _, f := range rootFiles(files, isJS) {
		// eslint.config.js, jest.config.ts, .prettierrc.js, Gruntfile.js:
		// tooling, not the package's code.
		base := strings.ToLower(f)
		if strings.Contains(base, ".config.") || strings.HasPrefix(base, ".") || strings.HasPrefix(base, "gruntfile.") || strings.HasPrefix(base, "gulpfile.") {
			continue
		}
		l.Fixable = append(l.Fixable, gates.LiteralGlob(f))
	}
	var pkg struct {
		Scripts         map[string]string `json:"scripts"`
		Dependencies    map[string]string `json:"dependencies"`
		DevDependencies map[string]string `json:"devDependencies"`
	}
	if err := json.Unmarshal(read("package.json"), &pkg); err != nil {
		l.Notes = append(l.Notes, "package.json could not be read as JSON: the test runner is a guess (node --test)")
	}
	script := pkg.Scripts["test"]
	uses := func(tool string) bool {
		_, dev := pkg.DevDependencies[tool]
		_, dep := pkg.Dependencies[tool]
		return dev || dep || strings.Contains(script, tool)
	}
	switch {
	case uses("jest"):
		l.Test = []string{"npx", "--no-install", "jest", "{test_path}"}
	case uses("vitest"):
		l.Test = []string{"npx", "--no-install", "vitest", "run", "{test_path}"}
	case uses("mocha"):
		l.Test = []string{"npx", "--no-install", "mocha", "{test_path}"}
	default:
		l.Test = []string{"node", "--test", "{test_path}"}
	}
	// npm init's placeholder script fails by design: it is no suite.
	if script != "" && !strings.Contains(script, "no test specified") {
		l.Suite = []string{"npm", "test"}
	} else {
		l.Suite = []string{"node", "--test"}
		l.Notes = append(l.Notes, "package.json has no test script: the suite is node --test")
	}
	return l
}
