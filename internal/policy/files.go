package policy

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// rm: every operand is a write; with -r (or an option only known at run
// time, which could be -r) every operand is a recursive delete checked
// against the scratch allowlist.
func (a *analyzer) rm(c *cmd) {
	recursive, maybe := false, false
	var ops []field
	args := c.args
	for i := 0; i < len(args); i++ {
		f := args[i]
		switch {
		case f.s == "--" && !f.dyn:
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case f.dyn && f.optLike():
			maybe = true
			ops = append(ops, f)
		case strings.HasPrefix(f.s, "--"):
			// GNU rm accepts any unambiguous prefix: --rec, --recur, ...
			name, _, _ := strings.Cut(f.s[2:], "=")
			if name != "" && strings.HasPrefix("recursive", name) {
				recursive = true
			}
		case strings.HasPrefix(f.s, "-") && f.s != "-":
			if strings.ContainsAny(f.s[1:], "rR") {
				recursive = true
			}
		default:
			ops = append(ops, f)
		}
	}
	for _, f := range ops {
		a.removePath(f, c.st, "rm", recursive || maybe)
	}
	if !recursive && !maybe {
		return
	}
	for _, f := range ops {
		if recursive {
			a.deleteTree(f, c.st, "rm -r")
		} else if reason, _ := a.deleteVerdict(f, c.st, "rm"); reason != "" {
			a.add(Destructive, true, "%s (an option only known at run time may be -r)", reason)
		}
	}
}

func (a *analyzer) shred(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "ns", long: []string{"iterations", "size", "random-source", "remove"}})
	for _, f := range p.operands {
		a.writePath(f, c.st, "shred")
		if !f.dyn && strings.HasPrefix(f.s, "/dev/") {
			a.device(f.s, "shred")
			continue
		}
		a.deleteTree(f, c.st, "shred")
	}
}

// find: -delete and -exec rm delete what lies below the starting points;
// -exec/-execdir/-ok run a command for each file found, with {} standing for
// a path below a starting point.
func (a *analyzer) find(c *cmd) {
	args := c.args
	i := 0
	for i < len(args) && !args[i].dyn {
		s := args[i].s
		if s == "-H" || s == "-L" || s == "-P" || strings.HasPrefix(s, "-O") {
			i++
			continue
		}
		if s == "-D" {
			i += 2
			continue
		}
		break
	}
	var starts []field
	for i < len(args) {
		s := args[i].s
		if !args[i].dyn && (strings.HasPrefix(s, "-") || s == "(" || s == "!" || s == ",") {
			break
		}
		starts = append(starts, args[i])
		i++
	}
	if len(starts) == 0 {
		starts = []field{word(".")}
	}
	for ; i < len(args); i++ {
		f := args[i]
		if f.dyn {
			if f.optLike() {
				a.add(Destructive, true, "find expression only known at run time")
			}
			continue
		}
		if findValued.has(f.s) {
			i++ // -name -delete: "-delete" is the pattern
			continue
		}
		switch f.s {
		case "-delete":
			for _, s := range starts {
				a.removePath(s, c.st, "find -delete", true)
				a.deleteTree(s, c.st, "find -delete under")
			}
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if i+1 < len(args) {
				i++
				a.writePath(args[i], c.st, "find "+f.s)
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j].s != ";" && args[j].s != "+" {
				j++
			}
			inner := args[i+1 : j]
			i = j
			if len(inner) == 0 {
				continue
			}
			name := progName(inner[0].s)
			deletes := !inner[0].dyn && (name == "rm" || name == "unlink" || name == "shred" || name == "rmdir")
			for _, s := range starts {
				argv := make([]field, len(inner))
				for k, w := range inner {
					switch {
					case w.s == "{}" && !w.dyn:
						argv[k] = s
					case strings.Contains(w.s, "{}"):
						argv[k] = field{s: strings.ReplaceAll(w.s, "{}", dynMark), dyn: true}
					default:
						argv[k] = w
					}
				}
				if deletes {
					a.removePath(s, c.st, "find "+f.s+" "+name, true)
					a.deleteTree(s, c.st, "find "+f.s+" "+name+" under")
				}
				a.command(argv, c.env, c.st, input{}, c.depth+1)
				// {} is every file find reaches below s, not s: the
				// command runs again on each protected file find could
				// hand it, so that sed -i {} on ~/.claude/settings.json
				// is the write it is.
				for _, p := range a.protectedBelow(s, c.st, findNames(args)) {
					pv := make([]field, len(inner))
					for k, w := range inner {
						pv[k] = w
						if w.s == "{}" && !w.dyn {
							pv[k] = word(p)
						}
					}
					a.command(pv, c.env, c.st, input{}, c.depth+1)
				}
			}
		}
	}
}

// fd (fdfind) runs the command after -x/--exec once per match and after
// -X/--exec-batch once with every match, up to a ";" or the end of its
// arguments; a command with no placeholder gets the match appended. It is
// judged as find -exec over fd's search paths: its placeholders ({}, {/},
// {//}, {.}, {/.}) stand for files below them.
func (a *analyzer) fd(c *cmd) {
	valued := wordSet{"-e", "--extension", "-t", "--type", "-d", "--max-depth", "--min-depth", "--exact-depth",
		"-E", "--exclude", "-S", "--size", "--changed-within", "--changed-before", "--newer", "--older",
		"-o", "--owner", "--base-directory", "--search-path", "-j", "--threads", "--max-results",
		"-c", "--color", "--ignore-file", "--path-separator", "--format", "--batch-size", "--hyperlink"}
	var ops, paths, inner []field
	for i := 0; i < len(c.args); i++ {
		f := c.args[i]
		switch {
		case !f.dyn && (f.s == "-x" || f.s == "--exec" || f.s == "-X" || f.s == "--exec-batch"):
			j := i + 1
			for j < len(c.args) && (c.args[j].dyn || c.args[j].s != ";") {
				j++
			}
			inner = append(inner, c.args[i+1:j]...)
			i = j
		case !f.dyn && (f.s == "--search-path" || f.s == "--base-directory") && i+1 < len(c.args):
			i++
			paths = append(paths, c.args[i])
		case !f.dyn && valued.has(f.s):
			i++
		case !f.dyn && strings.HasPrefix(f.s, "-"):
		default:
			ops = append(ops, f)
		}
	}
	if len(inner) == 0 {
		return
	}
	if len(ops) > 1 {
		paths = append(paths, ops[1:]...)
	}
	if len(paths) == 0 {
		paths = []field{word(".")}
	}
	placed := false
	for k, w := range inner {
		switch {
		case w.dyn:
		case w.s == "{}":
			placed = true
		case strings.Contains(w.s, "{/}") || strings.Contains(w.s, "{//}") || strings.Contains(w.s, "{.}") || strings.Contains(w.s, "{/.}") || strings.Contains(w.s, "{}"):
			inner[k] = field{s: dynMark, dyn: true}
			placed = true
		}
	}
	if !placed {
		inner = append(inner, word("{}"))
	}
	args := append(append(paths, word("-exec")), inner...)
	a.find(&cmd{name: "find", argv: append([]field{word("find")}, args...), args: append(args, word(";")), env: c.env, st: c.st, in: c.in, depth: c.depth})
}

// findNames returns find's -name/-iname patterns, lower-cased, when they
// filter what reaches -exec; nil when nothing does or when a negation
// (! or -not) makes the filter unreadable at a glance (every file counts).
func findNames(args []field) []string {
	var pats []string
	for i, f := range args {
		switch {
		case f.dyn || f.s == "!" || f.s == "-not":
			return nil
		case (f.s == "-name" || f.s == "-iname") && i+1 < len(args) && !args[i+1].dyn:
			pats = append(pats, strings.ToLower(args[i+1].s))
		}
	}
	return pats
}

// protectedBelow lists the protected files find could reach below start
// and hand to -exec: the files of every zone inside it (its directories
// listed once, bounded), and the project's own protected names at its
// top; with name patterns, only those whose base name matches one.
func (a *analyzer) protectedBelow(start field, st *state, names []string) []string {
	if start.dyn || st.remote {
		return nil
	}
	root, ok := cleanAbs(st.cwd, a.expandTilde(start.s))
	if !ok {
		return nil
	}
	rc := splitPath(root)
	match := func(p string) bool {
		if names == nil {
			return true
		}
		b := strings.ToLower(filepath.Base(p))
		for _, n := range names {
			if m, _ := path.Match(n, b); m {
				return true
			}
		}
		return false
	}
	var out []string
	add := func(p string) {
		if match(p) && !slices.Contains(out, p) && len(out) < maxGlob {
			out = append(out, p)
		}
	}
	// reach adds a protected file, or what a protected directory holds
	// (listed once, bounded).
	reach := func(p string) {
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
		case fi.IsDir():
			names, _ := a.readDir(p)
			for _, n := range names {
				add(filepath.Join(p, n))
			}
		default:
			add(p)
		}
	}
	for _, z := range a.zoneList() {
		switch {
		case z.inside(rc):
			reach(root) // find starts inside the zone
		case z.containedBy(rc):
			// The start's own spelling, then the zone's remaining
			// components (lower-cased, as zones keep them).
			reach(filepath.Join(append([]string{root}, z.comps[len(rc):]...)...))
		}
	}
	// The project's own protected names at the start's top; a
	// directory among them (.codex, .devcontainer) for all it holds.
	for _, rel := range a.nameSuffixes(false) {
		if found, ok := a.globs(filepath.Join(root, rel)); ok {
			for _, f := range found {
				reach(f)
			}
		}
	}
	return out
}

// findValued are find's tests and options that take an argument.
var findValued = wordSet{"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
	"-lname", "-ilname", "-newer", "-anewer", "-cnewer", "-newerat", "-newermt", "-newerct", "-newerBt", "-newermm",
	"-type", "-xtype", "-user", "-group", "-uid", "-gid", "-perm", "-size", "-mtime", "-atime", "-ctime",
	"-mmin", "-amin", "-cmin", "-used", "-maxdepth", "-mindepth", "-links", "-inum", "-samefile", "-fstype",
	"-context", "-printf", "-regextype", "-files0-from"}

// cp, mv and install write their destination; mv also removes its sources.
func (a *analyzer) cp(c *cmd) {
	sp := optSpec{short: "St", long: []string{"target-directory", "suffix"}}
	if c.name == "install" {
		sp = optSpec{short: "gmoSt", long: []string{"group", "mode", "owner", "target-directory", "suffix", "strip-program"}}
	}
	p := parseOpts(c.args, sp)
	if p.dyn {
		a.add(SelfMod, true, "%s options only known at run time", c.name)
	}
	if c.name == "install" {
		if m, ok := p.value("-m", "--mode"); ok && setuidMode(m.s) {
			a.add(ScopeEscalation, false, "install -m %s sets the setuid or setgid bit", m.s)
		}
	}
	recursive := p.has("-r", "-R", "-a", "--recursive", "--archive")
	ops := p.operands
	dest, ok := p.value("-t", "--target-directory")
	srcs := ops
	if !ok {
		if len(ops) < 2 {
			if c.name == "install" && p.has("-d", "--directory") {
				for _, f := range ops {
					a.writePath(f, c.st, "install -d")
				}
			}
			return
		}
		dest, srcs = ops[len(ops)-1], ops[:len(ops)-1]
	}
	if c.name == "install" && p.has("-d", "--directory") {
		for _, f := range ops {
			a.writePath(f, c.st, "install -d")
		}
		return
	}
	if c.name == "mv" && !dest.dyn && dest.s == "/dev/null" {
		for _, s := range srcs {
			a.add(Destructive, false, "mv %s to /dev/null destroys it", s)
		}
	}
	a.writeTree(dest, c.st, c.name, c.name == "mv" && recursive)
	// Replacing a .git file; or, with one source that is not a directory
	// and no .git there yet, making one (a directory source makes a .git
	// directory, judged by what it holds in treeLands).
	a.gitPointer(dest, c.st, c.name, !ok && len(srcs) == 1 && !a.isDirSource(srcs[0], c.st))
	for _, s := range srcs {
		if !dest.dyn && !s.dyn && !p.has("-T", "--no-target-directory") {
			a.writePath(word(filepath.Join(dest.s, filepath.Base(s.s))), c.st, c.name)
			if p.has("--parents") && !filepath.IsAbs(s.s) {
				// cp --parents a/b/f DIR writes DIR/a/b/f.
				a.writePath(word(filepath.Join(dest.s, s.s)), c.st, c.name+" --parents")
			}
		}
		if c.name == "mv" || recursive {
			a.treeLands(s, dest, c.st, c.name, !p.has("-T", "--no-target-directory"), false)
		}
		if c.name == "mv" {
			a.removePath(s, c.st, "mv", true)
		} else {
			a.readPath(s, c.st, c.name, recursive)
		}
		if c.name == "cp" && p.has("-s", "--symbolic-link") {
			// cp -s makes links to the sources, read from the working
			// directory.
			a.recordLink(dest, s, c.st, true, p.has("-T", "--no-target-directory"))
		}
	}
}

// isDirSource reports whether a copy's or a move's source is known to be
// a directory: one on the disk (not a link to one: cp -r and mv copy the
// link itself), or one this command made earlier (mkdir, or a path
// it wrote below). A source only known at run time, or missing, is not known to be.
func (a *analyzer) isDirSource(f field, st *state) bool {
	if f.dyn || st.remote {
		return false
	}
	p, ok := cleanAbs(st.cwd, a.expandTilde(f.s))
	if !ok {
		return false
	}
	if fi, err := os.Lstat(p); err == nil {
		return fi.IsDir()
	}
	if a.madeDirs[p] {
		return true
	}
	for w := range a.written {
		if strings.HasPrefix(w, p+"/") {
			return true
		}
	}
	return false
}

// setuidMode reports whether a chmod/install mode sets setuid or setgid.
func setuidMode(m string) bool {
	if isOctal(m) {
		if len(m) >= 4 {
			d := m[len(m)-4]
			return d == '2' || d == '3' || d == '4' || d == '5' || d == '6' || d == '7'
		}
		return false
	}
	for _, clause := range strings.Split(m, ",") {
		if i := strings.IndexAny(clause, "+="); i >= 0 && strings.ContainsRune(clause[i:], 's') {
			return true
		}
	}
	return false
}

func isOctal(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '7' {
			return false
		}
	}
	return true
}

func (a *analyzer) ln(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "St", long: []string{"target-directory", "suffix"}})
	ops := p.operands
	var target, link field
	symbolic := p.has("-s", "--symbolic")
	if d, ok := p.value("-t", "--target-directory"); ok {
		for _, t := range ops {
			a.writePath(t, c.st, "ln (link target)")
			l := field{s: filepath.Join(d.s, filepath.Base(t.s)), dyn: d.dyn || t.dyn}
			a.lnLink(l, l.dyn, c.st)
			if symbolic {
				a.recordLink(l, t, c.st, p.has("-r", "--relative"), true)
			}
		}
		return
	}
	switch len(ops) {
	case 0:
		return
	case 1:
		target, link = ops[0], word(filepath.Base(ops[0].s))
		link.dyn = ops[0].dyn
	default:
		target, link = ops[0], ops[len(ops)-1]
	}
	// A link to a protected file lets a later, innocent-looking edit of
	// the link change it.
	a.writePath(target, c.st, "ln (link target)")
	a.lnLink(link, link.dyn, c.st)
	if symbolic {
		a.recordLink(link, target, c.st, p.has("-r", "--relative"), p.has("-n", "--no-dereference", "-T", "--no-target-directory"))
	}
	a.treeLands(target, link, c.st, "ln", true, true)
}

// treeLands checks a tree that lands whole at dest — copied or moved
// recursively, or linked — against the name rules: what it holds arrives
// under dest's path. A copy of a template's .claude directory writes
// .claude/settings.json as surely as an editor does, though neither
// command line names the file. into: dest, when a directory, receives src
// under its own name (cp, mv and ln without -T). A link makes whatever its
// target holds, now or later, the files at its own path, so for ln every
// protected run the link's own path begins counts (a.linkHolds), present
// or not.
func (a *analyzer) treeLands(src, dest field, st *state, how string, into, link bool) {
	if src.dyn || dest.dyn || st.remote {
		return
	}
	s, ok1 := cleanAbs(st.cwd, a.expandTilde(src.s))
	d, ok2 := cleanAbs(st.cwd, a.expandTilde(dest.s))
	if !ok1 || !ok2 {
		return
	}
	if fi, err := os.Stat(d); into && err == nil && fi.IsDir() {
		if strings.HasSuffix(src.s, "/.") || (how == "rsync" && strings.HasSuffix(src.s, "/")) {
			// The source's contents, not the directory itself.
		} else {
			d = filepath.Join(d, filepath.Base(s))
		}
	}
	if link {
		a.linkHolds(d, how)
		return
	}
	for _, rel := range a.nameSuffixes(true) {
		// The analyzer's own glob: bounded, so a planted directory of a
		// million names cannot stall the hook past the CLI's timeout.
		found, ok := a.globs(filepath.Join(s, rel))
		if !ok {
			a.add(SelfMod, true, "%s: the tree at %s is too large to read for %s", how, s, rel)
			continue
		}
		for _, f := range found {
			if _, err := os.Lstat(f); err != nil {
				continue
			}
			r, err := filepath.Rel(s, f)
			if err != nil {
				continue
			}
			a.checkNames(splitPath(filepath.Join(d, r)), how+" (the tree at "+s+")", filepath.Join(d, r))
		}
	}
	// What this command wrote into the tree before moving it is not on
	// the disk yet: it lands too (mkdir t && echo > t/settings.json && mv
	// t .claude).
	var earlier []string
	for w := range a.written {
		if strings.HasPrefix(w, s+"/") {
			earlier = append(earlier, w)
		}
	}
	slices.Sort(earlier)
	for _, w := range earlier {
		r, err := filepath.Rel(s, w)
		if err != nil {
			continue
		}
		a.checkNames(splitPath(filepath.Join(d, r)), how+" (written into "+s+" earlier in this command)", filepath.Join(d, r))
	}
}

func (a *analyzer) lnLink(link field, dyn bool, st *state) {
	link.dyn = link.dyn || dyn
	a.writePath(link, st, "ln")
	if !link.dyn {
		if p, ok := cleanAbs(st.cwd, link.s); ok {
			a.links = append(a.links, p)
		}
	}
}

func (a *analyzer) touch(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "dtrsmZ", long: []string{"date", "reference", "time", "size", "mode", "context"}})
	ops := p.operands
	if c.name == "mknod" && len(ops) > 1 {
		ops = ops[:1]
	}
	for _, f := range ops {
		a.writePath(f, c.st, c.name)
		if c.name == "mkdir" && !f.dyn {
			if p, ok := cleanAbs(c.st.cwd, a.expandTilde(f.s)); ok {
				if a.madeDirs == nil {
					a.madeDirs = map[string]bool{}
				}
				a.madeDirs[p] = true
			}
		}
	}
}

// chmod: the first operand is the mode (modes like -x look like options).
func (a *analyzer) chmod(c *cmd) {
	recursive := false
	mode := ""
	haveMode := false
	var files []field
	for i, f := range c.args {
		if f.s == "--" {
			rest := c.args[i+1:]
			if !haveMode && len(rest) > 0 {
				mode, haveMode, rest = rest[0].s, true, rest[1:]
			}
			files = append(files, rest...)
			break
		}
		switch {
		case strings.HasPrefix(f.s, "--reference"):
			haveMode = true
		case strings.HasPrefix(f.s, "--recursive"):
			recursive = true
		case strings.HasPrefix(f.s, "--"):
		case strings.HasPrefix(f.s, "-") && strings.Trim(f.s[1:], "rwxXstugoa") == "" && !haveMode:
			mode, haveMode = f.s, true
		case strings.HasPrefix(f.s, "-") && len(f.s) > 1:
			recursive = recursive || strings.Contains(f.s, "R")
		case !haveMode:
			mode, haveMode = f.s, true
		default:
			files = append(files, f)
		}
	}
	if setuidMode(mode) {
		a.add(ScopeEscalation, false, "chmod %s sets the setuid or setgid bit", mode)
	}
	for _, f := range files {
		a.writeTree(f, c.st, "chmod", recursive)
	}
}

func (a *analyzer) chown(c *cmd) {
	p := parseOpts(c.args, optSpec{long: []string{"from"}})
	ops := p.operands
	ref := false
	for _, o := range p.opts {
		ref = ref || strings.HasPrefix(o.name, "--reference")
	}
	if c.name == "chattr" {
		var files []field
		for _, f := range c.args {
			if !strings.HasPrefix(f.s, "-") && !strings.HasPrefix(f.s, "+") && !strings.HasPrefix(f.s, "=") {
				files = append(files, f)
			}
		}
		ops, ref = files, true
	}
	if !ref && len(ops) > 0 {
		ops = ops[1:]
	}
	recursive := p.has("-R", "--recursive")
	for _, f := range ops {
		a.writeTree(f, c.st, c.name, recursive)
	}
}

func (a *analyzer) setfacl(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "mMxX", long: []string{"modify", "modify-file", "remove", "remove-file", "set", "set-file"}})
	for _, f := range p.operands {
		a.writeTree(f, c.st, "setfacl", p.has("-R", "--recursive"))
	}
}

func (a *analyzer) dd(c *cmd) {
	for _, f := range c.args {
		if v, ok := strings.CutPrefix(f.s, "of="); ok {
			a.writePath(field{s: v, dyn: f.dyn}, c.st, "dd of=")
		}
		if v, ok := strings.CutPrefix(f.s, "if="); ok {
			a.readPath(field{s: v, dyn: f.dyn}, c.st, "dd if=", false)
		}
	}
}

// sed writes its file operands with -i, and its script may run commands
// and write files (GNU sed's e and w; see sedScript).
func (a *analyzer) sed(c *cmd) {
	inPlace, sandbox := false, false
	var ops, scripts []field
	fromFile := false
	args := c.args
	for i := 0; i < len(args); i++ {
		f := args[i]
		next := func() (field, bool) {
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return field{}, false
		}
		switch {
		case f.s == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case f.dyn && f.optLike():
			inPlace = true // could be -i, or a file
			ops = append(ops, f)
		case strings.HasPrefix(f.s, "--in-place"):
			inPlace = true
		case f.s == "--sandbox":
			sandbox = true // GNU sed refuses e, r and w
		case f.s == "--expression":
			if v, ok := next(); ok {
				scripts = append(scripts, v)
			}
		case f.s == "--file":
			fromFile = true
			if v, ok := next(); ok {
				a.scriptArg(v, c)
			}
		case strings.HasPrefix(f.s, "--expression="):
			scripts = append(scripts, field{s: strings.TrimPrefix(f.s, "--expression="), dyn: f.dyn})
		case strings.HasPrefix(f.s, "--file="):
			fromFile = true
			a.scriptArg(field{s: strings.TrimPrefix(f.s, "--file="), dyn: f.dyn}, c)
		case f.s == "--line-length":
			i++
		case strings.HasPrefix(f.s, "--"):
		case strings.HasPrefix(f.s, "-") && len(f.s) > 1:
			cl := f.s[1:]
			for j := 0; j < len(cl); j++ {
				switch cl[j] {
				case 'i':
					inPlace = true
					j = len(cl)
				case 'e', 'f', 'l':
					v := field{s: cl[j+1:], dyn: f.dyn}
					if j == len(cl)-1 {
						v, _ = next()
					}
					switch cl[j] {
					case 'e':
						scripts = append(scripts, v)
					case 'f':
						fromFile = true
						a.scriptArg(v, c)
					}
					j = len(cl)
				}
			}
		default:
			ops = append(ops, f)
		}
	}
	if len(scripts) == 0 && !fromFile && len(ops) > 0 {
		scripts, ops = ops[:1], ops[1:]
	}
	if !sandbox {
		for _, sc := range scripts {
			a.sedEffects(sc, c)
		}
	}
	if !inPlace {
		return
	}
	for _, f := range ops {
		a.writePath(f, c.st, "sed -i")
	}
}

// sedEffects judges what a sed script runs and writes.
func (a *analyzer) sedEffects(script field, c *cmd) {
	e := sedScript(script.s)
	for _, r := range e.runs {
		a.runsText(field{s: r, dyn: strings.Contains(r, dynMark)}, c, "sed e")
	}
	if e.runsPattern {
		a.all("sed's e runs text it reads, only known at run time")
	}
	for _, w := range e.writes {
		a.writePath(field{s: w, dyn: strings.Contains(w, dynMark)}, c.st, "sed w")
	}
	if e.unread != "" {
		a.all("sed runs a script the hook cannot read to its end (" + e.unread + ")")
	}
}

// tar: creating reads the operands and writes the archive; extracting
// writes into -C; --to-command and friends run commands.
func (a *analyzer) tar(c *cmd) {
	p := parseOpts(oldStyle(c.args, tarValued), optSpec{short: tarValued, long: []string{"file", "directory", "files-from", "exclude-from",
		"format", "use-compress-program", "transform", "owner", "group", "mode", "label", "newer", "after-date",
		"blocking-factor", "record-size", "tape-length", "volno-file", "info-script", "new-volume-script", "rsh-command", "to-command", "checkpoint-action",
		"strip-components", "strip", "transform", "xform"}})
	for _, o := range p.opts {
		if !o.has {
			continue
		}
		switch o.name {
		case "-I", "--use-compress-program", "--to-command", "--rsh-command", "--info-script", "--new-volume-script", "-F":
			a.runsText(o.val, c, "tar "+o.name)
		case "--checkpoint-action":
			if v, ok := strings.CutPrefix(o.val.s, "exec="); ok {
				a.runsText(field{s: v, dyn: o.val.dyn}, c, "tar --checkpoint-action=exec")
			}
		}
	}
	create := p.has("-c", "-r", "-u", "-A", "--create", "--append", "--update", "--catenate", "--concatenate")
	extract := p.has("-x", "--extract", "--get")
	if create {
		if f, ok := p.value("-f", "--file"); ok && f.s != "-" {
			a.writePath(f, c.st, "tar -f")
		}
		for _, f := range p.operands {
			a.readPath(f, c.st, "tar", true)
		}
	}
	if !extract {
		return
	}
	groups := tarLandings(p)
	for _, g := range groups {
		if g.dir.s != "" || g.dir.dyn {
			a.writePath(g.dir, c.st, "tar -x -C")
		}
	}
	if p.has("-O", "--to-stdout", "--to-command", "-t", "--list") {
		return // the members go to standard output or a command, not to files
	}
	x := extraction{how: "tar -x", absolute: p.has("-P", "--absolute-names")}
	if f, ok := p.value("-f", "--file"); ok && f.s != "-" {
		x.archive = f
	} else {
		x.stdin = true // GNU tar's and bsdtar's default archive
	}
	if v, ok := p.value("--strip-components", "--strip"); ok {
		if n, err := strconv.Atoi(v.s); err == nil && !v.dyn && n >= 0 {
			x.strip = n
		} else {
			x.renamed = "--strip-components has no count known here"
		}
	}
	switch {
	case p.has("--transform", "--xform"):
		x.renamed = "--transform renames them"
	case p.has("-s"):
		x.renamed = "-s may rename them (bsdtar's -s substitutes in member names)"
	case p.has("-I", "--use-compress-program", "-F", "--info-script", "--new-volume-script", "-M", "--multi-volume"):
		x.renamed = "a program or another volume supplies them"
	}
	var top field
	oneTop := p.has("--one-top-level")
	if oneTop {
		top, _ = p.value("--one-top-level")
		if top.s == "" && !top.dyn {
			base := filepath.Base(x.archive.s)
			if i := strings.Index(base, ".tar"); i > 0 {
				base = base[:i]
			} else {
				base = strings.TrimSuffix(base, filepath.Ext(base))
			}
			top = word(base)
		}
	}
	for _, g := range groups {
		x := x
		x.dest, x.only = g.dir, g.only
		if oneTop {
			if x.dest.s == "" && !x.dest.dyn {
				x.dest = word(".")
			}
			x.dest = field{s: filepath.Join(x.dest.s, top.s), dyn: x.dest.dyn || top.dyn}
		}
		a.extracts(x, c.st)
	}
}

// tarValued are the letters of tar's short options that take a value
// (GNU tar's; -F is its --info-script). In the traditional first argument
// ("tar xCf dir a.tar") each takes the next word, in the letters' order.
const tarValued = "bCfFgHIKLNTVX"

// tarLanding is a directory tar -x puts members in, and the member
// operands that land there (none: every member).
type tarLanding struct {
	dir  field // "" for the working directory
	only []field
}

// tarLandings says where tar -x puts members. -C is cumulative (a relative
// directory is taken from the one before it: "-C a -C b" is a/b) and, in
// GNU tar, positional: a member operand is extracted in the directory in
// effect where it stands, so "tar -C dir -xf a.tar member -C /tmp/x" writes
// dir/member. bsdtar extracts everything in the last one. Both readings
// are judged; members listed in a file (-T) are judged in every directory
// the command line names.
func tarLandings(p parsed) []tarLanding {
	dirs := []field{{}} // dirs[k]: the directory in effect after the first k options
	for _, o := range p.opts {
		d := dirs[len(dirs)-1]
		if (o.name == "-C" || o.name == "--directory") && o.has {
			d = tarChdir(d, o.val)
		}
		dirs = append(dirs, d)
	}
	final := dirs[len(dirs)-1]
	var out []tarLanding
	add := func(d field, member *field) {
		for i := range out {
			if out[i].dir == d {
				if member != nil && out[i].only != nil {
					out[i].only = append(out[i].only, *member)
				}
				return
			}
		}
		l := tarLanding{dir: d}
		if member != nil {
			l.only = []field{*member}
		}
		out = append(out, l)
	}
	switch {
	case p.has("-T", "--files-from"):
		for _, d := range dirs {
			add(d, nil)
		}
	case len(p.operands) == 0:
		add(final, nil)
	default:
		for i, m := range p.operands {
			add(dirs[p.before[i]], &m)
			add(final, &m)
		}
	}
	return out
}

// tarChdir is the directory after -C next, from d.
func tarChdir(d, next field) field {
	switch {
	case next.dyn, d.s == "" && !d.dyn, strings.HasPrefix(next.s, "/"), strings.HasPrefix(next.s, "~"):
		return next
	}
	return field{s: d.s + "/" + next.s, dyn: d.dyn}
}

// runsText analyses text a command hands to a shell.
func (a *analyzer) runsText(t field, c *cmd, how string) {
	if t.dyn {
		a.all(how + " runs text only known at run time")
	}
	a.script(dynText(t.s), a.childState(c.st, c.env), c.depth+1, how)
}

func (a *analyzer) zip(c *cmd) {
	args := slices.Clone(c.args)
	for i, f := range args {
		if f.s == "-TT" { // the one two-letter short option: the command -T tests with
			args[i] = word("--unzip-command")
		}
	}
	p := parseOpts(args, optSpec{short: "bnPtxiZ", long: []string{"temp-path", "suffixes", "password", "from-date", "exclude", "include", "unzip-command", "compression-method"}})
	if t, ok := p.value("--unzip-command"); ok {
		a.runsText(t, c, "zip -TT")
	}
	if len(p.operands) == 0 {
		return
	}
	a.writePath(p.operands[0], c.st, "zip")
	for _, f := range p.operands[1:] {
		a.readPath(f, c.st, "zip", p.has("-r", "--recurse-paths"))
	}
}

func (a *analyzer) unzip(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "dP"})
	d, ok := p.value("-d")
	if ok {
		a.writePath(d, c.st, "unzip -d")
	}
	if p.has("-l", "-v", "-t", "-z", "-Z", "-p", "-c") || len(p.operands) == 0 {
		return // listing, testing, comments, zipinfo, or to standard output
	}
	x := extraction{how: "unzip", archive: p.operands[0], dest: d, junk: p.has("-j"), only: p.operands[1:]}
	if !x.archive.dyn && hasMeta(x.archive.s) {
		x.renamed = "unzip expands its archive's name itself"
	} else if !x.archive.dyn && filepath.Ext(x.archive.s) == "" {
		// unzip tries NAME, then NAME.zip.
		if p, ok := cleanAbs(c.st.cwd, a.expandTilde(x.archive.s)); ok {
			if _, err := os.Lstat(p); err != nil {
				x.archive.s += ".zip"
			}
		}
	}
	if p.has("-x") {
		x.only = nil // what follows -x is excluded, not picked; read every member
	}
	if p.has("-:") {
		x.renamed = "-: lets members climb out with ../"
	}
	a.extracts(x, c.st)
}

func (a *analyzer) yq(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "oIp", long: []string{"output-format", "input-format", "indent", "front-matter", "expression"}})
	if !p.has("-i", "--inplace") {
		return
	}
	ops := p.operands
	if len(ops) > 0 && (ops[0].s == "eval" || ops[0].s == "e" || ops[0].s == "eval-all" || ops[0].s == "ea") {
		ops = ops[1:]
	}
	if _, ok := p.value("--expression"); !ok && len(ops) > 0 {
		ops = ops[1:]
	}
	for _, f := range ops {
		a.writePath(f, c.st, "yq -i")
	}
}

// patch writes the files its patch names; a patch read from another
// command's output cannot be checked.
func (a *analyzer) patch(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "iodpBDFrVYz", long: []string{"input", "output", "directory", "strip", "prefix",
		"ifdef", "fuzz", "reject-file", "version-control", "basename-prefix", "suffix", "backup-if-mismatch"}})
	if p.has("--dry-run", "-C", "--check") {
		return
	}
	st := c.st
	if d, ok := p.value("-d", "--directory"); ok {
		st = st.clone()
		st.setCwd(dirOf(d, st))
	}
	if o, ok := p.value("-o", "--output"); ok {
		a.writePath(o, st, "patch -o")
		return
	}
	if len(p.operands) > 0 {
		a.writePath(p.operands[0], st, "patch")
		return
	}
	// The shell opens a redirection in its own directory; patch reads -i
	// after -d has moved it.
	src, from := c.in, c.st
	if f, ok := p.value("-i", "--input"); ok {
		src, from = input{kind: inFile, file: f}, st
	}
	a.applyPatch(src, from, st, "patch")
}

// applyPatch checks the files a patch from src (a file named relative to
// from's directory) would write in st's.
func (a *analyzer) applyPatch(src input, from, st *state, how string) {
	var text string
	switch src.kind {
	case inText:
		text = src.text
	case inFile:
		if src.file.dyn {
			a.add(SelfMod, true, "%s applies a patch named only at run time", how)
			return
		}
		p, ok := cleanAbs(from.cwd, a.expandTilde(src.file.s))
		if !ok {
			return
		}
		b, ok := readSmall(p, 16*maxScript)
		if !ok {
			if a.written[p] {
				a.add(SelfMod, true, "%s applies %s, which this command writes first", how, p)
			}
			return
		}
		text = string(b)
	case inUnknown:
		a.add(SelfMod, true, "%s applies a patch from the output of another command", how)
		a.add(ScopeEscalation, true, "%s applies a patch from the output of another command", how)
		return
	default:
		return
	}
	for _, f := range patchPaths(text) {
		a.writePath(word(f), st, how)
	}
}

func (a *analyzer) editor(c *cmd) {
	valued := edValued(c.name)
	vi := false // the vi family, whose -c, --cmd and +cmd are Ex commands
	switch c.name {
	case "vi", "vim", "nvim", "ex", "view", "gvim", "vimdiff":
		vi = true
	}
	var e exEffects
	exMode := c.name == "ex"
	args := c.args
	for i := 0; i < len(args); i++ {
		f := args[i]
		switch {
		case f.s == "--":
			for _, g := range args[i+1:] {
				a.writePath(g, c.st, c.name)
			}
			i = len(args)
		case vi && (f.s == "-c" || f.s == "--cmd") && i+1 < len(args):
			i++
			a.exLine(args[i], &e)
		case vi && strings.HasPrefix(f.s, "+") && len(f.s) > 1 && f.s[1] != '/' && (f.s[1] < '0' || f.s[1] > '9'):
			a.exLine(field{s: f.s[1:], dyn: f.dyn}, &e)
		case vi && (f.s == "-e" || f.s == "-E" || f.s == "-es" || f.s == "-Es"):
			exMode = true
		case c.name == "emacs" && (f.s == "--eval" || f.s == "-eval") && i+1 < len(args):
			i++
			a.elisp(args[i], c)
		case c.name == "emacs" && strings.HasPrefix(f.s, "--eval="):
			a.elisp(field{s: strings.TrimPrefix(f.s, "--eval="), dyn: f.dyn}, c)
		case valued[f.s]:
			i++
		case strings.HasPrefix(f.s, "-") || strings.HasPrefix(f.s, "+"):
		default:
			a.writePath(f, c.st, c.name)
		}
	}
	if c.in.kind == inText {
		switch {
		case !vi && (c.name == "ed" || c.name == "red"):
			edScript(c.in.text, &e)
		case vi && exMode:
			for line := range strings.Lines(c.in.text) {
				vimEx(strings.TrimRight(line, "\r\n"), &e)
			}
		}
	}
	a.exJudge(e, c)
}

// elispEffects are the Emacs Lisp functions that run programs or change
// files.
var elispEffects = []string{"shell-command", "call-process", "start-process", "make-process", "process-file", "async-shell-command",
	"delete-directory", "delete-file", "write-region", "copy-file", "rename-file", "make-symbolic-link", "append-to-file",
	"write-file", "copy-directory", "org-babel-tangle", "eshell-command"}

// elisp judges emacs --eval code: one that calls a function running a
// program or changing files is unresolvable (the forms are not read).
func (a *analyzer) elisp(code field, c *cmd) {
	if code.dyn {
		a.all("emacs --eval runs code only known at run time")
		return
	}
	for _, fn := range elispEffects {
		if strings.Contains(code.s, fn) {
			a.all("emacs --eval calls " + fn)
			return
		}
	}
}

// exLine reads one Ex command line given on the command line.
func (a *analyzer) exLine(f field, e *exEffects) {
	if f.dyn && strings.HasPrefix(strings.TrimLeft(f.s, " :"), dynMark) {
		e.unread = "a command only known at run time"
		return
	}
	vimEx(f.s, e)
}

// exJudge judges what an editor's commands run and write.
func (a *analyzer) exJudge(e exEffects, c *cmd) {
	how := c.name + " commands"
	for _, r := range e.runs {
		a.runsText(field{s: r, dyn: strings.Contains(r, dynMark)}, c, how+" (!)")
	}
	for _, k := range e.code {
		if k.lang == "vim" {
			a.all(how + " call functions that run programs or change files")
			continue
		}
		a.scanCode(k.lang, k.text, how+" ("+k.lang+")")
	}
	for _, w := range e.writes {
		a.writePath(field{s: w, dyn: strings.Contains(w, dynMark)}, c.st, how+" (:w)")
	}
	if e.bareW {
		for _, o := range e.opened {
			a.writePath(field{s: o, dyn: strings.Contains(o, dynMark)}, c.st, how+" (:e, then :w)")
		}
	}
	if e.unread != "" {
		a.all(how + ": " + e.unread)
	}
}

func (a *analyzer) terraform(c *cmd) {
	i := firstOperand(c.args, "", nil)
	if i < 0 {
		return
	}
	switch c.args[i].s {
	case "destroy":
		a.add(Destructive, false, "%s destroy", c.name)
	case "apply", "run-all":
		for _, f := range c.args[i+1:] {
			switch f.s {
			case "-destroy", "--destroy", "destroy":
				a.add(Destructive, false, "%s apply -destroy", c.name)
			case "-auto-approve", "--auto-approve":
				a.add(Teardown, false, "%s apply -auto-approve changes (and may destroy) infrastructure without review", c.name)
			}
		}
	}
}

func (a *analyzer) kubectl(c *cmd) {
	i := firstOperand(c.args, "nsc", []string{"namespace", "context", "cluster", "kubeconfig", "server", "user", "token"})
	if i >= 0 && (c.args[i].s == "delete" || c.args[i].s == "drain") {
		a.add(Destructive, false, "kubectl %s", c.args[i].s)
	}
	if i >= 0 && c.args[i].s == "apply" && hasField(c.args[i+1:], "--prune") {
		a.add(Destructive, false, "kubectl apply --prune deletes what the manifests no longer name")
	}
	if i >= 0 && (c.args[i].s == "edit" || c.args[i].s == "edit-last-applied") {
		a.envCommand(c, "kubectl edit", "KUBE_EDITOR", "EDITOR") // the first set is the editor
	}
	if i >= 0 && c.args[i].s == "cp" {
		var rest []field
		p := parseOpts(c.args[i+1:], optSpec{short: "cn", long: []string{"container", "namespace", "retries", "context", "kubeconfig"}})
		rest = p.operands
		a.containerCopy(c, rest, true)
	}
}

func (a *analyzer) helm(c *cmd) {
	a.addressesCarried(c.args, "helm") // helm repo add NAME URL, --repo URL
	i := firstOperand(c.args, "n", []string{"namespace", "kube-context", "kubeconfig"})
	if i < 0 {
		return
	}
	switch c.args[i].s {
	case "uninstall", "delete", "del", "un":
		a.add(Destructive, false, "helm %s", c.args[i].s)
	case "push":
		a.add(Publish, false, "helm push")
	}
}

var destructiveSQL = lazy(`(?i)\b(drop\s+(table|database|schema|collection|index|view|keyspace)|truncate\s+(table\s+)?\w|delete\s+from\b|alter\s+table\b[^;]*\bdrop\b|flushall|flushdb|dropdatabase\s*\(|\.drop\s*\()|\.(deletemany|deleteone|remove|findoneanddelete|findandmodify)\s*\(`)

// redisDeletes are redis-cli commands that delete keys.
var redisDeletes = wordSet{"del", "unlink", "flushall", "flushdb", "getdel", "hdel", "srem", "zrem", "xdel", "lrem", "zremrangebyscore", "zremrangebyrank"}

// sql matches destructive statements given on the command line of a
// database client (psql -c, mysql -e, sqlite3 db "...", redis-cli FLUSHALL).
func (a *analyzer) sql(c *cmd) {
	text := strings.Join(statics(c.args), " ")
	if destructiveSQL.MatchString(text) {
		a.add(Destructive, false, "%s runs a destructive statement", c.name)
	}
	if c.in.kind == inText && destructiveSQL.MatchString(c.in.text) {
		a.add(Destructive, false, "%s reads a destructive statement", c.name)
	}
	a.sqlClient(c)
	if c.name == "sqlite3" {
		a.sqliteDatabase(c)
	}
	if c.name == "redis-cli" {
		// redis-cli [options] COMMAND args: the command is the first
		// operand; -h/-p/-a/-n/-u... take values.
		i := firstOperand(c.args, "hpasnuxdD", []string{"user", "pass", "tls", "cacert", "cert", "key", "sni", "pipe-timeout"})
		if i >= 0 && redisDeletes.has(strings.ToLower(c.args[i].s)) {
			a.add(Destructive, false, "redis-cli %s deletes keys", c.args[i].s)
		}
	}
}

// sqliteDatabase: sqlite3 opens its database file for writing (a
// statement given later, on standard input or by -cmd may change it) unless
// -readonly: a protected file named as the database may be written.
func (a *analyzer) sqliteDatabase(c *cmd) {
	valued := wordSet{"-cmd", "-init", "-separator", "-newline", "-nullvalue", "-mmap", "-vfs", "-lookaside",
		"-pagecache", "-maxsize", "-escape"}
	for i := 0; i < len(c.args); i++ {
		f := c.args[i]
		switch {
		case f.s == "-readonly" || f.s == "--readonly":
			return
		case valued.has(strings.Replace(f.s, "--", "-", 1)):
			i++
		case strings.HasPrefix(f.s, "-"):
		default:
			if p, ok := cleanAbs(c.st.cwd, a.expandTilde(f.s)); ok && !f.dyn {
				a.mayWriteRule(SelfMod, "sqlite3 opening its database", p)
			}
			return
		}
	}
}

// search handles grep -r, rg, ag and ack: a recursive search prints file
// contents, so searching a directory that holds the approval keys reads
// them. Only paths named on the command line are checked.
func (a *analyzer) search(c *cmd) {
	sp := optSpec{short: "efABCmdD", long: []string{"regexp", "file", "after-context", "before-context", "context",
		"max-count", "directories", "devices", "include", "exclude", "exclude-dir", "label", "color", "colour"}}
	if c.name != "grep" && c.name != "egrep" && c.name != "fgrep" {
		sp = optSpec{short: "efgtTABCmMjrE", long: []string{"regexp", "file", "glob", "type", "type-not", "after-context",
			"before-context", "context", "max-count", "max-depth", "threads", "replace", "encoding", "ignore-file", "pre", "sort", "sortr"}}
	}
	p := parseOpts(c.args, sp)
	recursive := c.name != "grep" && c.name != "egrep" && c.name != "fgrep" || p.has("-r", "-R", "--recursive", "--dereference-recursive")
	ops := p.operands
	if !p.has("-e", "-f", "--regexp", "--file") && len(ops) > 0 {
		ops = ops[1:]
	}
	for _, f := range ops {
		a.readPath(f, c.st, c.name, recursive)
	}
	if pre, ok := p.value("--pre"); ok {
		a.runsText(pre, c, c.name+" --pre")
	}
}
