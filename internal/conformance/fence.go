package conformance

import (
	"strconv"
	"strings"

	"github.com/rhysd/actionlint"
	"mvdan.cc/sh/v3/syntax"
)

// fence is one delimited block in a prompt: the text between an open
// marker line and the matching close marker line.
type fence struct {
	openOff, bodyOff, closeOff, endOff int // byte offsets in the value
	marker                             string
	exprs                              []*expr  // ${{ }} in the open marker
	shellRefs                          []string // $NAME in the open marker (run: scripts only)
}

func (f fence) contains(off int) bool { return off >= f.bodyOff && off < f.closeOff }

var shellRefRe = lazyRE(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)

// fences finds marker pairs in value: a line and a later identical line,
// or <X> and </X>, or BEGIN… and END…. sc supplies the expressions; shell
// says whether $NAME in a marker is expanded (a run: script) or literal
// text (an action input).
func fences(value string, sc *scalar, shell bool) []fence {
	type line struct {
		start, end int
		text       string
	}
	var lines []line
	for off := 0; off <= len(value); {
		e := strings.IndexByte(value[off:], '\n')
		if e < 0 {
			e = len(value) - off
		}
		// Quotes around a marker line are the shell's, not the marker's.
		lines = append(lines, line{off, off + e, strings.Trim(strings.TrimSpace(value[off:off+e]), `"'`)})
		off += e + 1
	}
	var out []fence
	for i := 0; i < len(lines); i++ {
		t := lines[i].text
		if t == "" || len(t) > 200 || strings.HasPrefix(t, "</") {
			continue
		}
		closes := []string{t}
		if strings.HasPrefix(t, "<") {
			closes = append(closes, "</"+t[1:])
		}
		if strings.Contains(t, "BEGIN") {
			closes = append(closes, strings.Replace(t, "BEGIN", "END", 1))
		}
		if !markerShaped(t) {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			if !containsStr(closes, lines[j].text) {
				continue
			}
			f := fence{openOff: lines[i].start, bodyOff: lines[i].end, closeOff: lines[j].start, endOff: lines[j].end, marker: t}
			for _, e := range sc.exprs {
				if e.off >= lines[i].start && e.off < lines[i].end {
					f.exprs = append(f.exprs, e)
				}
			}
			if shell {
				for _, m := range shellRefRe().FindAllStringSubmatch(t, -1) {
					if !isPlaceholder(m[1]) {
						f.shellRefs = append(f.shellRefs, m[1])
					}
				}
			}
			out = append(out, f)
			i = j
			break
		}
	}
	return out
}

// markerShaped: a delimiter, not prose or shell that happens to repeat
// (fi, done, EOF): a tag <...>, a rule of punctuation (```, ---, ===), a
// BEGIN/END line, or a token carrying a reference. No spaces outside ${{ }}.
func markerShaped(t string) bool {
	hasRef := strings.Contains(t, "${{") || shellRefRe().MatchString(t)
	for {
		i := strings.Index(t, "${{")
		if i < 0 {
			break
		}
		j := strings.Index(t[i:], "}}")
		if j < 0 {
			break
		}
		t = t[:i] + "X" + t[i+j+2:]
	}
	switch {
	case strings.ContainsAny(t, " \t"):
		return false
	case strings.HasPrefix(t, "<") && strings.HasSuffix(t, ">"):
		return true
	case len(t) >= 3 && strings.Trim(t, "`~-=#*\"'+") == "":
		return true
	case strings.Contains(t, "BEGIN"):
		return true
	}
	return hasRef
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// randomSource and weakSource classify the text that produces a nonce.
var (
	randomSource = lazyRE(`openssl\s+rand\s+(?:-hex|-base64)\s+(\d+)|/dev/urandom|uuidgen\s+(?:-r|--random)|/proc/sys/kernel/random/uuid|secrets\.token_(?:hex|urlsafe|bytes)|os\.urandom|crypto\.random(?:Bytes|UUID)`)
	weakSource   = lazyRE(`\$\{?RANDOM\b|\bdate\b|GITHUB_RUN_(?:ID|NUMBER|ATTEMPT)|GITHUB_SHA|run_id|run_number|run_attempt|\.sha\b|uuidgen\s+(?:-t|--time)`)
)

// judgeNonceText returns "" when text draws from a random source with
// enough entropy, else why not.
func judgeNonceText(text string) string {
	for _, m := range randomSource().FindAllStringSubmatch(text, -1) {
		if m[1] != "" {
			if n, _ := strconv.Atoi(m[1]); n < 16 {
				continue // openssl rand with fewer than 16 bytes
			}
		}
		return ""
	}
	if weakSource().MatchString(text) {
		return "it comes from a predictable value (run id, run number, sha, date or $RANDOM)"
	}
	return "it does not come from a random source (openssl rand -hex 16, /dev/urandom, uuidgen -r)"
}

// judgeNonceExpr follows a ${{ }} nonce reference to what produces it.
func (w *Workflow) judgeNonceExpr(e *expr, sc scope, depth int) string {
	if depth > 4 {
		return "its producer could not be followed"
	}
	if len(e.refs) == 0 {
		return "it is a constant"
	}
	for _, r := range e.refs {
		switch {
		case r[0] == "github" || r[0] == "runner" || r[0] == "strategy":
			return "it is " + strings.Join(r, ".") + ", which anyone can read or predict"
		case r[0] == "secrets" || r[0] == "vars":
			return "it is " + strings.Join(r, ".") + ", the same on every run"
		case r[0] == "steps" && len(r) >= 4 && r[2] == "outputs":
			return w.judgeStepOutput(sc, r[1], r[3])
		case r[0] == "env" && len(r) >= 2:
			return w.judgeEnvNonce(sc, r[1], depth)
		}
	}
	return "it is not produced by a step of this job from a random source"
}

// judgeStepOutput checks that step id writes output key from a random source.
func (w *Workflow) judgeStepOutput(sc scope, id, key string) string {
	k := [4]any{sc.job, sc.step, id, key}
	if r, ok := w.nonceCache[k]; ok {
		return r
	}
	r := w.judgeStepOutput0(sc, id, key)
	w.nonceCache[k] = r
	return r
}

func (w *Workflow) judgeStepOutput0(sc scope, id, key string) string {
	if sc.job == nil {
		return "its producer could not be found"
	}
	for _, st := range sc.job.steps {
		if st == sc.step {
			break
		}
		if st.id != id {
			continue
		}
		if st.sh == nil {
			return "step " + id + " is not a shell step that generates it"
		}
		// Every write of the key must be random: the runner keeps the last.
		found := false
		for _, top := range st.sh.file.Stmts {
			out, _ := redirectsTo(top)
			txt := printNode(top)
			if !out || !strings.Contains(strings.ToLower(txt), key+"=") {
				continue
			}
			found = true
			if why := judgeNonceText(st.sh.resolveText(txt, 0)); why != "" {
				return why
			}
		}
		if found {
			return ""
		}
		return "step " + id + " does not visibly write output " + key
	}
	return "no earlier step " + id + " in this job produces it"
}

// judgeEnvNonce follows an environment variable to its definition.
func (w *Workflow) judgeEnvNonce(sc scope, name string, depth int) string {
	name = strings.ToLower(name)
	var defs []*actionlint.Env
	if sc.step != nil {
		defs = append(defs, sc.step.al.Env)
	}
	if sc.job != nil {
		// An export from an earlier step's script.
		for _, st := range sc.job.steps {
			if st == sc.step {
				break
			}
			if st.sh == nil {
				continue
			}
			for _, top := range st.sh.file.Stmts {
				if _, env := redirectsTo(top); env {
					for _, n := range exportNames(top) {
						if strings.ToLower(n) == name {
							return judgeNonceText(st.sh.resolveText(printNode(top), 0))
						}
					}
				}
			}
		}
		defs = append(defs, sc.job.al.Env)
	}
	defs = append(defs, w.wf.Env)
	for _, env := range defs {
		if env == nil {
			continue
		}
		for n, v := range env.Vars {
			if strings.ToLower(n) != name {
				continue
			}
			s := w.exprsOf(v.Value)
			if len(s.exprs) == 0 {
				return "it is the constant " + quote(v.Value.Value)
			}
			return w.judgeNonceExpr(s.exprs[0], scope{job: sc.job}, depth+1)
		}
	}
	return "environment variable " + name + " is not defined in this workflow"
}

// resolveText expands $NAME in text with the literal text of the script's
// assignments to NAME (a few levels), so the producer of a value is visible.
func (s *script) resolveText(text string, depth int) string {
	if depth > 3 {
		return text
	}
	var b strings.Builder
	b.WriteString(text)
	for _, m := range shellRefRe().FindAllStringSubmatch(text, -1) {
		for _, v := range s.assignText(m[1]) {
			b.WriteString(" ")
			b.WriteString(s.resolveText(v, depth+1))
		}
	}
	return b.String()
}

func (s *script) assignText(name string) []string {
	var out []string
	syntax.Walk(s.file, func(n syntax.Node) bool {
		if a, ok := n.(*syntax.Assign); ok && a.Name != nil && a.Name.Value == name && a.Value != nil {
			out = append(out, printNode(a.Value))
		}
		return true
	})
	return out
}

// judgeShellNonce follows $NAME in a run: script's marker.
func (w *Workflow) judgeShellNonce(st *step, name string) string {
	if vs := st.sh.assignText(name); len(vs) > 0 {
		return judgeNonceText(st.sh.resolveText(strings.Join(vs, " "), 0))
	}
	return w.judgeEnvNonce(scope{job: st.job, step: st}, name, 0)
}
