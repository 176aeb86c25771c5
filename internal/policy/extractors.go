package policy

import "strings"

// Extractors other than tar and unzip. Each is reduced to an extraction
// (archive, destination, members named) and judged by extracts: a plain or
// gzip tar or a zip is read for its members whatever tool unpacks it (a jar
// is a zip; 7z, pax and python's modules read tars and zips too), and any
// other format is unreadable, so the extraction is unresolvable where a
// protected name could land. Without this, `7z x a.7z` did what `tar xf
// a.tar` is judged for.

// jar: jar xf a.jar, jar -xf, jar --extract --file a.jar: members land in
// the working directory, or in --dir (-C) where the JDK has it.
func (a *analyzer) jar(c *cmd) {
	p := parseOpts(oldStyle(c.args, "fme"), optSpec{short: "fmeC", long: []string{"file", "manifest", "main-class", "dir", "release", "module-version", "hash-modules", "module-path"}})
	if !p.has("-x", "--extract") {
		return
	}
	x := extraction{how: "jar -x", only: p.operands}
	x.dest, _ = p.value("-C", "--dir")
	if f, ok := p.value("-f", "--file"); ok && f.s != "-" {
		x.archive = f
	} else {
		x.stdin = true
	}
	if x.dest.s != "" || x.dest.dyn {
		a.writePath(x.dest, c.st, "jar -x --dir")
	}
	a.extracts(x, c.st)
}

// sevenZip: 7z x ARCHIVE [MEMBER...] [-oDIR] keeps the members' paths, 7z e
// drops them; switches may stand anywhere. -si reads standard input.
func (a *analyzer) sevenZip(c *cmd) {
	if len(c.args) == 0 || c.args[0].dyn {
		return
	}
	verb := strings.ToLower(c.args[0].s)
	if verb != "x" && verb != "e" {
		return // a, l, t, d, u and the rest do not write members out
	}
	x := extraction{how: c.name + " " + verb, junk: verb == "e"}
	var ops []field
	for _, f := range c.args[1:] {
		switch {
		case f.dyn && f.optLike():
			x.renamed = "a switch is only known at run time"
		case strings.HasPrefix(f.s, "-o"):
			x.dest = field{s: f.s[2:], dyn: f.dyn}
		case f.s == "-si" || strings.HasPrefix(f.s, "-si"):
			x.stdin = true
		case strings.HasPrefix(f.s, "-"):
		default:
			ops = append(ops, f)
		}
	}
	if !x.stdin {
		if len(ops) == 0 {
			return
		}
		x.archive, ops = ops[0], ops[1:]
	}
	x.only = ops
	if x.dest.s != "" || x.dest.dyn {
		a.writePath(x.dest, c.st, c.name+" -o")
	}
	a.extracts(x, c.st)
}

// cpio -i (copy-in) extracts standard input, or -F/-I/--file's archive,
// into the working directory or -D/--directory; cpio -p copies the paths
// listed on standard input into its operand. Neither is read (the newc and
// odc formats are not), so both are judged by where they land.
func (a *analyzer) cpio(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "FIOEHDCMR", long: []string{"file", "format", "directory", "pattern-file", "io-size", "message", "owner", "rsh-command", "block-size"}})
	switch {
	case p.has("-i", "--extract"):
		x := extraction{how: c.name + " -i", only: p.operands}
		x.dest, _ = p.value("-D", "--directory")
		if f, ok := p.value("-F", "-I", "--file"); ok {
			x.archive = f
		} else {
			x.stdin = true
		}
		if p.has("-r", "--rename", "-E", "--pattern-file") {
			x.renamed = "its members are renamed or picked interactively or from a file"
		}
		a.extracts(x, c.st)
	case p.has("-p", "--pass-through") && len(p.operands) > 0:
		a.extracts(extraction{how: c.name + " -p", stdin: true, dest: p.operands[len(p.operands)-1],
			renamed: "the paths it copies come from standard input", copies: true}, c.st)
	}
}

// pax -r extracts its archive (-f, or standard input) into the working
// directory; pax -rw copies its operands into the last one. -s renames.
func (a *analyzer) pax(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "fsobBxpUG"})
	if !p.has("-r") {
		return
	}
	if p.has("-w") {
		if len(p.operands) > 0 {
			a.extracts(extraction{how: "pax -rw", stdin: true, dest: p.operands[len(p.operands)-1],
				renamed: "it copies a tree, not an archive", copies: true}, c.st)
		}
		return
	}
	x := extraction{how: "pax -r", only: p.operands}
	if f, ok := p.value("-f"); ok && f.s != "-" {
		x.archive = f
	} else {
		x.stdin = true
	}
	if p.has("-s") {
		x.renamed = "-s renames them"
	}
	a.extracts(x, c.st)
}

// unrar x ARCHIVE [MEMBER...] [DIR/] (unrar e drops paths), unar ARCHIVE
// [-o DIR], aunpack ARCHIVE [-X DIR] and atool -x: members land in the
// working directory or the one named.
func (a *analyzer) unarchiver(c *cmd) {
	x := extraction{how: c.name}
	var p parsed
	switch c.name {
	case "unrar":
		if len(c.args) == 0 || c.args[0].dyn || (c.args[0].s != "x" && c.args[0].s != "e") {
			return
		}
		x.how, x.junk = "unrar "+c.args[0].s, c.args[0].s == "e"
		p = parseOpts(c.args[1:], optSpec{})
		if n := len(p.operands); n > 1 && strings.HasSuffix(p.operands[n-1].s, "/") {
			x.dest, p.operands = p.operands[n-1], p.operands[:n-1]
		}
	case "unar":
		p = parseOpts(c.args, optSpec{short: "opek", long: []string{"output-directory", "password", "encoding", "password-encoding", "forks"}})
		x.dest, _ = p.value("-o", "--output-directory")
	default: // aunpack, atool
		p = parseOpts(c.args, optSpec{short: "XFDSEfO", long: []string{"extract-to", "format", "config", "option"}})
		if c.name == "atool" && !p.has("-x", "--extract") {
			return
		}
		x.dest, _ = p.value("-X", "--extract-to")
	}
	if len(p.operands) == 0 {
		return
	}
	x.archive, x.only = p.operands[0], p.operands[1:]
	if c.name == "atool" || c.name == "aunpack" {
		x.only = nil // each operand is an archive
	}
	if x.dest.s != "" || x.dest.dyn {
		a.writePath(x.dest, c.st, c.name+" into a directory")
	}
	a.extracts(x, c.st)
}

// ar x ARCHIVE [MEMBER...]: the members, plain names, land in the working
// directory (or --output). The ar format is not read.
func (a *analyzer) ar(c *cmd) {
	if len(c.args) == 0 || c.args[0].dyn {
		return
	}
	var rest []field
	x := extraction{how: "ar x"}
	ops := strings.TrimPrefix(c.args[0].s, "-")
	if !strings.Contains(ops, "x") || strings.ContainsAny(ops, "dmpqrst") {
		return
	}
	for _, f := range c.args[1:] {
		if v, ok := strings.CutPrefix(f.s, "--output="); ok {
			x.dest = field{s: v, dyn: f.dyn}
			continue
		}
		rest = append(rest, f)
	}
	if len(rest) == 0 {
		return
	}
	x.archive, x.only = rest[0], rest[1:]
	a.extracts(x, c.st)
}

// pythonArchive: python -m zipfile -e ZIP DIR and python -m tarfile -e TAR
// [DIR].
func (a *analyzer) pythonArchive(mod string, rest []field, c *cmd) {
	for i, f := range rest {
		if f.s != "-e" && f.s != "--extract" {
			continue
		}
		ops := rest[i+1:]
		if len(ops) == 0 {
			return
		}
		x := extraction{how: "python -m " + mod + " -e", archive: ops[0]}
		if len(ops) > 1 {
			x.dest = ops[1]
		}
		a.extracts(x, c.st)
		return
	}
}

// oldStyle expands a traditional first argument, option letters with no
// dash ("xvf"), into options; each letter in valued takes the next word, in
// the order the letters come (as tar and jar read them). A dashed cluster is
// left to parseOpts, which gives a letter the rest of its cluster.
func oldStyle(args []field, valued string) []field {
	if len(args) == 0 || args[0].dyn || args[0].s == "" || strings.HasPrefix(args[0].s, "-") {
		return args
	}
	for _, r := range args[0].s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return args
		}
	}
	rest := args[1:]
	out := make([]field, 0, 2*len(args[0].s)+len(rest))
	for _, l := range args[0].s {
		out = append(out, word("-"+string(l)))
		if strings.ContainsRune(valued, l) && len(rest) > 0 {
			out = append(out, rest[0])
			rest = rest[1:]
		}
	}
	return append(out, rest...)
}
