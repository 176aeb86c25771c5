package conformance

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rhysd/actionlint"
)

// acceptedBothWays runs actionlint on src and judges its key errors both
// ways: the whole file parsed again, and from the lines (fastOK false
// when the lines left it to the parse).
func acceptedBothWays(src []byte) (full, fast []*actionlint.Error, fastOK bool, keyErrs int) {
	_, errs := actionlint.Parse(src)
	var ke []*actionlint.Error
	for _, e := range errs {
		if isKeyErr(e) {
			ke = append(ke, e)
		}
	}
	full = acceptedFromParse(src, errs, ke)
	acc, ok := acceptedFromLines(src, ke)
	if !ok {
		return full, nil, false, len(ke)
	}
	for _, e := range errs {
		if !acc[e] {
			fast = append(fast, e)
		}
	}
	return full, fast, true, len(ke)
}

func errText(errs []*actionlint.Error) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString(e.Error())
		b.WriteByte('\n')
	}
	return b.String()
}

// TestAcceptedFromLinesAgrees: where the lines answer which key errors
// GitHub accepts, the answer is the whole parse's; plain shapes are
// answered from the lines, and the shapes a line cannot settle (flow
// style, anchors, aliases, tags, quoted keys, escapes, multi-line values,
// tabs, CR line ends, strings over several lines) are left to the parse.
func TestAcceptedFromLinesAgrees(t *testing.T) {
	const on = "on: push\npermissions: {}\n"
	const jobs = "jobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo hi\n"
	job := func(conc string) string {
		return on + "jobs:\n  a:\n    runs-on: ubuntu-latest\n" + conc + "    steps:\n      - run: echo hi\n"
	}
	cases := []struct {
		name, src string
		fast      bool // the lines answer
		accepted  int  // key errors the parse accepts
	}{
		{"description", "name: x\ndescription: Triage new issues\n" + on + jobs, true, 1},
		{"description comment", "description: Triage # not part of it\n" + on + jobs, true, 1},
		{"description quoted number", "description: \"42\"\n" + on + jobs, true, 1},
		{"description single-quoted", "description: 'it''s'\n" + on + jobs, true, 1},
		{"description escaped", "description: \"a\\tb\"\n" + on + jobs, true, 1},
		{"description number", "description: 42\n" + on + jobs, true, 0},
		{"description bool", "description: true\n" + on + jobs, true, 0},
		{"description null", "description: ~\n" + on + jobs, true, 0},
		{"description empty", "description:\n" + on + jobs, true, 0},
		{"description yes", "description: yes\n" + on + jobs, true, 1},
		{"description date", "description: 2024-01-01\n" + on + jobs, true, 0},
		{"description hex", "description: 0x1F\n" + on + jobs, true, 0},
		{"description merge", "description: <<\n" + on + jobs, true, 0},
		{"description block", "description: |\n  two\n  lines\n" + on + jobs, true, 1},
		{"description folded keep", "description: >+ # c\n  two\n\n  description: inside\n" + on + jobs, true, 1},
		{"description block with a key inside", "description: |\n  queue: max\n  jobs:\n" + on + jobs, true, 1},
		{"description mapping", "description:\n  a: b\n" + on + jobs, true, 0},
		// A document whose every line is indented: its top level is not column 1.
		{"description indented document", "  description: x\n  on: push\n  permissions: {}\n  jobs:\n    a:\n      runs-on: ubuntu-latest\n      steps:\n        - run: echo hi\n", false, 1},
		{"description sequence", "description:\n- a\n" + on + jobs, true, 0},
		{"description flow", "description: [a, b]\n" + on + jobs, true, 0},
		{"description flow mapping", "description: {a: b}\n" + on + jobs, true, 0},
		{"description multi-line plain", "description: two\n  lines\n" + on + jobs, false, 1},
		{"description multi-line number", "description: 42\n  43\n" + on + jobs, false, 1},
		{"description on the next line", "description:\n  text\n" + on + jobs, false, 1},
		{"description multi-line quoted", "description: \"two\n  lines\"\n" + on + jobs, false, 1},
		{"description quoted key", "\"description\": x\n" + on + jobs, false, 1},
		{"description tagged", "description: !!str 42\n" + on + jobs, false, 1},
		{"description anchored", "description: &d x\n" + on + jobs, false, 1},
		{"description duplicated", "description: a\ndescription: 42\n" + on + jobs, true, 1},
		{"description duplicated number first", "description: 42\ndescription: a\n" + on + jobs, true, 0},
		{"description after a document start", "---\ndescription: a\n" + on + jobs, true, 1},
		{"description tab", "description:\ta\n" + on + jobs, false, 1},
		{"description CRLF", strings.ReplaceAll("description: a\n"+on+jobs, "\n", "\r\n"), false, 1},
		{"description in a job", on + "jobs:\n  a:\n    description: x\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo hi\n", true, 0},
		{"description in a string over lines", "name: \"a\ndescription: b\"\n" + on + jobs, false, 0},
		{"description in flow root", "{description: a, on: push, jobs: {a: {runs-on: x, steps: [{run: echo}]}}}\n", false, 1},
		{"queue max", on + "concurrency:\n  group: g\n  queue: max\n" + jobs, true, 1},
		{"queue single comment", on + "concurrency: # the run's\n  group: g\n  cancel-in-progress: false\n  queue: single # comment\n" + jobs, true, 1},
		{"queue quoted", on + "concurrency:\n  group: \"g-${{ github.ref }}\"\n  queue: \"max\"\n" + jobs, true, 1},
		{"queue single-quoted", on + "concurrency:\n  group: g\n  queue: 'single'\n" + jobs, true, 1},
		{"queue escaped", on + "concurrency:\n  group: g\n  queue: \"ma\\x78\"\n" + jobs, false, 1},
		{"queue folded", on + "concurrency:\n  group: g\n  queue: >-\n    max\n" + jobs, false, 1},
		{"queue literal", on + "concurrency:\n  group: g\n  queue: |\n    max\n" + jobs, false, 0},
		{"queue other value", on + "concurrency:\n  group: g\n  queue: all\n" + jobs, true, 0},
		{"queue upper case", on + "concurrency:\n  group: g\n  queue: MAX\n" + jobs, true, 0},
		{"queue expression", on + "concurrency:\n  group: g\n  queue: ${{ inputs.q }}\n" + jobs, true, 0},
		{"queue number", on + "concurrency:\n  group: g\n  queue: 1\n" + jobs, true, 0},
		{"queue mapping", on + "concurrency:\n  group: g\n  queue:\n    max: 1\n" + jobs, true, 0},
		{"queue multi-line", on + "concurrency:\n  group: g\n  queue: max\n    more\n" + jobs, false, 0},
		{"queue job", job("    concurrency:\n      group: g\n      queue: max\n"), true, 1},
		{"queue job lock-file shape", on + "jobs:\n  a:\n    needs:\n      - b\n    if: >\n      always() && (needs.b.result != 'skipped' ||\n      needs.b.outputs.x == 'true')\n    runs-on: ubuntu-slim\n    permissions:\n      contents: read\n    concurrency:\n      group: \"gh-aw-conclusion\"\n      cancel-in-progress: false\n      queue: max\n    outputs:\n      n: ${{ steps.s.outputs.n }}\n    steps:\n      - run: echo hi\n  b:\n    runs-on: x\n    steps:\n      - run: |\n          echo \"a: b\"\n          # concurrency:\n", true, 1},
		{"queue second job", on + "jobs:\n  a:\n    runs-on: x\n    steps:\n      - run: |\n          cat <<EOF\n  concurrency:\n          EOF\n  b:\n    runs-on: x\n    concurrency:\n      group: g\n      queue: single\n    steps:\n      - run: echo\n", false, 1},
		{"queue duplicated", on + "concurrency:\n  group: g\n  queue: max\n  queue: all\n" + jobs, true, 1},
		{"queue duplicated other first", on + "concurrency:\n  group: g\n  queue: all\n  queue: max\n" + jobs, true, 0},
		{"queue duplicated job concurrency", job("    concurrency:\n      group: g\n      queue: max\n    concurrency:\n      group: h\n      queue: max\n"), true, 1},
		{"queue duplicated workflow concurrency", on + "concurrency:\n  group: g\n  queue: max\nconcurrency:\n  group: g\n  queue: single\n" + jobs, true, 1},
		{"queue duplicated jobs", on + "jobs:\n  a:\n    runs-on: x\n    concurrency:\n      group: g\n      queue: max\n    steps:\n      - run: echo\njobs:\n  b:\n    runs-on: x\n    concurrency:\n      group: g\n      queue: max\n    steps:\n      - run: echo\n", true, 1},
		{"queue flow", on + "concurrency: {group: g, queue: max}\n" + jobs, false, 1},
		{"queue flow job", job("    concurrency: {group: g, queue: single}\n"), false, 1},
		{"queue anchored concurrency", on + "concurrency: &c\n  group: g\n  queue: max\n" + jobs, false, 1},
		{"queue job through an alias", on + "jobs:\n  a:\n    runs-on: x\n    strategy:\n      matrix:\n        include:\n          - &t\n            runs-on: x\n            concurrency:\n              group: g\n              queue: max\n            steps:\n              - run: echo\n    steps:\n      - run: echo\n  c: *t\n", false, 0},
		{"queue job through a quoted string", on + "jobs:\n  a:\n    runs-on: x\n    strategy:\n      matrix:\n        include:\n          - &t\n            name: \"foo\n  b:\n            \"\n            concurrency:\n              group: g\n              queue: max\n    steps:\n      - run: echo\n  c: *t\n", false, 0},
		{"queue quoted key", on + "concurrency:\n  group: g\n  \"queue\": max\n" + jobs, false, 1},
		{"queue quoted concurrency", on + "\"concurrency\":\n  group: g\n  queue: max\n" + jobs, false, 1},
		{"queue at the top", "queue: max\n" + on + jobs, true, 0},
		{"queue in a step", job("    steps:\n      - concurrency:\n          queue: max\n"), true, 0},
		{"queue tab", on + "concurrency:\n  group: g\n  queue:\tmax\n" + jobs, false, 1},
		{"queue and description", "description: d\n" + on + "concurrency:\n  group: g\n  queue: max\n" + job("    concurrency:\n      group: g\n      queue: all\n")[len(on):], true, 2},
		{"queue under a later document", on + jobs + "---\nconcurrency:\n  queue: max\n", true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			full, fast, ok, nkey := acceptedBothWays([]byte(c.src))
			_, errs := actionlint.Parse([]byte(c.src))
			if got := len(errs) - len(full); got != c.accepted {
				t.Errorf("the parse accepts %d of %d key errors, want %d; errors:\n%s", got, nkey, c.accepted, errText(errs))
			}
			if ok != c.fast && nkey > 0 {
				t.Errorf("answered from the lines = %v, want %v", ok, c.fast)
			}
			if ok && !slices.Equal(fast, full) {
				t.Errorf("from the lines:\n%swhole parse:\n%s", errText(fast), errText(full))
			}
		})
	}
}

// TestAcceptedFromLinesCorpus: the two ways agree on every corpus file and
// generated workflow (and on FIXRAIL_BENCH_LINT_DIR's, when set), and the
// lines answer for the generated lock-file shapes.
func TestAcceptedFromLinesCorpus(t *testing.T) {
	srcs := readWorkflows(t, "testdata/corpus/*.yml")
	if d := os.Getenv("FIXRAIL_BENCH_LINT_DIR"); d != "" {
		srcs = append(srcs, readWorkflows(t, filepath.Join(d, "*.yml"), filepath.Join(d, "*.yaml"))...)
	}
	gen := genWorkflows(8)
	srcs = append(srcs, gen...)
	answered := 0
	for i, src := range srcs {
		full, fast, ok, nkey := acceptedBothWays(src)
		if ok && nkey > 0 {
			answered++
		}
		if ok && !slices.Equal(fast, full) {
			t.Errorf("workflow %d: from the lines:\n%swhole parse:\n%s", i, errText(fast), errText(full))
		}
	}
	if answered < 2 {
		t.Errorf("the lines answered for %d workflows with key errors, want the generated lock files", answered)
	}
}

// FuzzAcceptedFromLines: wherever the lines answer, the whole parse agrees.
func FuzzAcceptedFromLines(f *testing.F) {
	for _, s := range []string{
		"description: a\non: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: echo\n",
		"description: |\n  x\non: push\njobs: {}\n",
		"on: push\nconcurrency:\n  group: g\n  queue: max\njobs:\n  a:\n    runs-on: x\n    concurrency:\n      group: g\n      queue: single # c\n    steps:\n      - run: echo\n",
		"on: push\njobs:\n  a:\n    runs-on: x\n    strategy:\n      matrix:\n        include:\n          - &t\n            concurrency:\n              group: g\n              queue: max\n  c: *t\n",
		"on: push\njobs:\n  a:\n    if: >\n      x\n    concurrency:\n      group: \"g\"\n      queue: 'max'\n",
	} {
		f.Add(s)
	}
	for _, src := range genWorkflows(4)[3:4] {
		f.Add(string(src))
	}
	f.Fuzz(func(t *testing.T, src string) {
		type result struct {
			full, fast []*actionlint.Error
			ok         bool
		}
		done := make(chan result, 1)
		go func() {
			full, fast, ok, _ := acceptedBothWays([]byte(src))
			done <- result{full, fast, ok}
		}()
		var r result
		select {
		case r = <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("over 5s on %q", src)
		}
		full, fast, ok := r.full, r.fast, r.ok
		if ok && !slices.Equal(fast, full) {
			t.Fatalf("on %q\nfrom the lines:\n%swhole parse:\n%s", src, errText(fast), errText(full))
		}
	})
}
