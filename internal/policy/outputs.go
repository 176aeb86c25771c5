package policy

import (
	"path/filepath"
	"strings"
)

// Commands that write a file named by an option or a later operand, which
// reading them as filters would miss.

// sortCmd: sort -o FILE writes FILE; --compress-program runs a program.
func (a *analyzer) sortCmd(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "kotTS", long: []string{"key", "output", "field-separator", "temporary-directory",
		"buffer-size", "parallel", "batch-size", "compress-program", "files0-from", "random-source", "sort"}})
	if o, ok := p.value("-o", "--output"); ok {
		a.writePath(o, c.st, "sort -o")
	}
	if prog, ok := p.value("--compress-program"); ok {
		a.runsText(prog, c, "sort --compress-program")
	}
}

// secondOperandOut: uniq [IN [OUT]] writes its second operand.
func secondOperandOut(sp optSpec) func(a *analyzer, c *cmd) {
	return func(a *analyzer, c *cmd) {
		p := parseOpts(c.args, sp)
		if len(p.operands) > 1 && p.operands[1].s != "-" {
			a.writePath(p.operands[1], c.st, c.name)
		}
	}
}

// xxd [IN [OUT]] writes its second operand. Its long options take one
// dash (-cols 16), read here as their letters.
func (a *analyzer) xxd(c *cmd) {
	long := map[string]string{"-cols": "-c", "-groupsize": "-g", "-len": "-l", "-seek": "-s", "-name": "-n", "-offset": "-o",
		"-bits": "-b", "-capitalize": "-C", "-EBCDIC": "-E", "-include": "-i", "-postscript": "-p", "-plain": "-p", "-ps": "-p", "-revert": "-r", "-uppercase": "-u"}
	args := make([]field, len(c.args))
	for i, f := range c.args {
		if l, ok := long[f.s]; ok {
			f = word(l)
		}
		args[i] = f
	}
	p := parseOpts(args, optSpec{short: "cglosn"})
	if len(p.operands) > 1 && p.operands[1].s != "-" {
		a.writePath(p.operands[1], c.st, "xxd")
	}
}

// opensslOut: whichever openssl command it is, -out, -keyout and their
// kin name files it writes.
func (a *analyzer) opensslOut(c *cmd) {
	for i, f := range c.args {
		switch f.s {
		case "-out", "-keyout", "-certout", "-sigout", "-rand_out", "-writerand", "-reqout", "-rspout":
			if i+1 < len(c.args) && c.args[i+1].s != "-" {
				a.writePath(c.args[i+1], c.st, "openssl "+f.s)
			}
		}
	}
}

// sshKeygenWrites: generating a key (no mode option) writes -f FILE and
// FILE.pub.
func (a *analyzer) sshKeygenWrites(p parsed, st *state) {
	if p.has("-l", "-y", "-e", "-i", "-F", "-R", "-H", "-Y", "-L", "-k", "-Q", "-B", "-D", "-K", "-M", "-r", "-s", "-A", "-p", "-c") {
		return
	}
	if f, ok := p.value("-f"); ok {
		a.writePath(f, st, "ssh-keygen -f")
		a.writePath(field{s: f.s + ".pub", dyn: f.dyn}, st, "ssh-keygen -f")
	}
}

// edValued are the options that take a value, for ed and for the vi
// family (whose -s is a script, where ed's -s is silence).
func edValued(name string) map[string]bool {
	switch name {
	case "ed", "red":
		return set("-p", "--prompt")
	case "emacs", "nano", "pico", "micro":
		return set("-l", "-f", "--load", "--funcall", "--insert", "--eval", "-L", "-T", "-t")
	}
	return set("-c", "-S", "-u", "-i", "-s", "-w", "-W", "-T", "-t", "-q", "--cmd", "-l", "-L")
}

// splitFiles: split writes PREFIX (default "x") plus a suffix of letters
// (digits with -d, hex digits with -x) and --additional-suffix; csplit
// writes PREFIX (default "xx") plus its -b printf format of the piece
// number (default %02d). The names are made at run time, so each protected
// file name the prefix's directory could receive is tried: where a
// generated suffix completes the prefix into it (.claude/settings.js and
// "on"), the call may write it. split --filter runs a command per piece.
func (a *analyzer) splitFiles(c *cmd) {
	var prefix, add field
	alphabet := "abcdefghijklmnopqrstuvwxyz"
	var form pieceFormat
	if !strings.HasSuffix(c.name, "csplit") {
		p := parseOpts(c.args, optSpec{short: "abClnt", long: []string{"suffix-length", "additional-suffix", "bytes",
			"line-bytes", "lines", "number", "separator", "filter"}})
		if f, ok := p.value("--filter"); ok {
			a.runsText(f, c, "split --filter")
		}
		switch {
		case p.has("-d") || hasPrefixField(c.args, "--numeric-suffixes"):
			alphabet = "0123456789"
		case p.has("-x") || hasPrefixField(c.args, "--hex-suffixes"):
			alphabet = "0123456789abcdef"
		}
		add, _ = p.value("--additional-suffix")
		prefix = word("x")
		if len(p.operands) > 1 {
			prefix = p.operands[1]
		}
	} else {
		p := parseOpts(c.args, optSpec{short: "fbn", long: []string{"prefix", "suffix-format", "digits"}})
		alphabet = "0123456789"
		prefix = word("xx")
		if f, ok := p.value("-f", "--prefix"); ok {
			prefix = f
		}
		if f, ok := p.value("-b", "--suffix-format"); ok {
			form = csplitFormat(f)
			if form.alphabet != "" {
				alphabet = form.alphabet
			}
		}
	}
	if prefix.dyn || add.dyn {
		a.add(SelfMod, true, "%s writes files named at run time (%s)", c.name, prefix)
		return
	}
	pre, ok := cleanAbs(c.st.cwd, a.expandTilde(prefix.s))
	if !ok {
		return
	}
	if strings.HasSuffix(prefix.s, "/") {
		pre += "/"
	}
	dir, base := filepath.Split(pre)
	// A piece is named base+S+add, S a run of the alphabet (anything with a
	// csplit -b format). The S worth trying come from the protected names
	// themselves: each tail of a name (or of a pattern's last component,
	// *.pth) that S can spell. One more, the first piece's, stands for any
	// name: a protected directory (.bashrc.d, .claude/hooks) receives
	// every piece. mayWrite matches the whole path, so an S that makes no
	// protected name costs nothing.
	var paths []string
	for _, s := range append(pieceSuffixes(a.protectedFileNames(), add.s, alphabet, form), alphabet[:1]+alphabet[:1]) {
		paths = append(paths, filepath.Join(dir, base+s+add.s))
	}
	a.mayWrite(c.name+" (a piece's generated name)", paths...)
}

// pieceFormat is what a csplit -b format makes of the piece number: lead,
// a run of alphabet (empty when a precision is given: %.0d prints nothing
// for 0), trail. anyText: a format not read here (only known at run time,
// or not one integer conversion), which may make any text.
type pieceFormat struct {
	lead, trail, alphabet string
	mayBeEmpty, anyText   bool
}

// csplitFormat reads a csplit -b format: printf text with exactly one
// integer conversion (%[flags][width][.precision]d, i, u, o, x or X) and
// %% for a percent sign.
func csplitFormat(f field) pieceFormat {
	any := pieceFormat{anyText: true}
	if f.dyn {
		return any
	}
	var lit [2]strings.Builder
	form, n := pieceFormat{}, 0
	t := f.s
	for i := 0; i < len(t); i++ {
		if t[i] != '%' {
			lit[min(n, 1)].WriteByte(t[i])
			continue
		}
		if i+1 < len(t) && t[i+1] == '%' {
			lit[min(n, 1)].WriteByte('%')
			i++
			continue
		}
		j := i + 1
		for j < len(t) && strings.IndexByte("-+ #0'", t[j]) >= 0 {
			j++
		}
		for j < len(t) && t[j] >= '0' && t[j] <= '9' {
			j++
		}
		if j < len(t) && t[j] == '.' {
			form.mayBeEmpty = true
			for j++; j < len(t) && t[j] >= '0' && t[j] <= '9'; j++ {
			}
		}
		if j >= len(t) || n > 0 {
			return any
		}
		switch t[j] {
		case 'd', 'i', 'u':
			form.alphabet = "0123456789"
		case 'o':
			form.alphabet = "01234567"
		case 'x':
			form.alphabet = "0123456789abcdef"
		case 'X':
			form.alphabet = "0123456789ABCDEF"
		default:
			return any
		}
		n++
		i = j
	}
	if n != 1 {
		return any
	}
	form.lead, form.trail = lit[0].String(), lit[1].String()
	return form
}

// pieceSuffixes returns, for each name, every tail of it that ends with add
// and whose part before add is what the pieces' names add to the prefix: a
// nonempty run of alphabet, or with a csplit -b format its lead, a run of
// its alphabet and its trail (any text when the format is not read) — the
// generated part of a piece name that could complete a prefix into that
// name. Tails holding a pattern's metacharacters are skipped; the literal
// text after them is tried.
func pieceSuffixes(names []string, add, alphabet string, form pieceFormat) []string {
	var out []string
	for _, name := range names {
		for i := range len(name) {
			mid, ok := strings.CutSuffix(name[i:], add)
			if !ok || mid == "" || hasMeta(mid) || strings.Contains(mid, "/") {
				continue
			}
			if form.anyText {
				out = append(out, mid)
				continue
			}
			run, ok := strings.CutPrefix(mid, form.lead)
			if ok {
				run, ok = strings.CutSuffix(run, form.trail)
			}
			if ok && strings.Trim(run, alphabet) == "" && (run != "" || form.mayBeEmpty) {
				out = append(out, mid)
			}
		}
	}
	return out
}

// protectedFileNames are the base names a protected file can have: the
// name rules' last components (patterns among them: *.pth; settings*.json
// as settings.json and settings.local.json too) and the zones' files.
func (a *analyzer) protectedFileNames() []string {
	names := []string{"settings.json", "settings.local.json"}
	zones := a.zoneList() // builds the name rules too
	for _, n := range a.names {
		names = append(names, n.elems[len(n.elems)-1].pat)
	}
	for _, z := range zones {
		if z.file && len(z.comps) > 0 {
			names = append(names, z.comps[len(z.comps)-1])
		}
	}
	return names
}

// mayWrite judges paths a command may write, by names it makes at run
// time: a protected path is unresolvable, not certain. Each zone and name
// rule is reported once, at the first path it holds.
func (a *analyzer) mayWrite(how string, paths ...string) { a.mayWriteRule("", how, paths...) }

// mayWriteRule is mayWrite for one rule's zones and names ("" for all).
func (a *analyzer) mayWriteRule(rule Rule, how string, paths ...string) {
	zones := a.zoneList()
	zoneSeen, nameSeen := make([]bool, len(zones)), make([]bool, len(a.names))
	for _, p := range paths {
		comps := splitPath(p)
		for i, z := range zones {
			if rule != "" && z.rule != rule {
				continue
			}
			if !zoneSeen[i] && z.inside(comps) {
				zoneSeen[i] = true
				a.add(z.rule, true, "%s may write %s (%s)", how, p, z.what)
			}
		}
		for i, n := range a.names {
			if rule != "" && n.rule != rule {
				continue
			}
			if !nameSeen[i] && n.match(comps) {
				nameSeen[i] = true
				a.add(n.rule, true, "%s may write %s (%s)", how, p, n.what)
			}
		}
	}
}

// prettier rewrites its file operands with --write (-w); otherwise it
// prints or checks them.
func (a *analyzer) prettier(c *cmd) {
	p := parseOpts(c.args, optSpec{long: []string{"config", "ignore-path", "plugin", "parser", "log-level", "cache-location",
		"cache-strategy", "stdin-filepath", "config-precedence", "end-of-line", "trailing-comma", "arrow-parens",
		"prose-wrap", "html-whitespace-sensitivity", "embedded-language-formatting", "quote-props", "print-width",
		"tab-width", "experimental-operator-position", "object-wrap"}})
	if !p.has("--write", "-w") {
		return
	}
	for _, f := range p.operands {
		a.writePath(f, c.st, "prettier --write")
	}
}
