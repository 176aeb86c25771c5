package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fixrail/fixrail/internal/pathguard"
)

// curl and wget read options from files as well as from their command
// lines: curl from a .curlrc before its arguments (unless -q comes first)
// and from every -K/--config file where it stands; wget from the system's
// and the user's wgetrc (or $WGETRC, or --config), each line a command -e
// could give. An option there — a method, a body, an output file — does
// what it does on the command line, so those files are read here and their
// options judged as if written out. A file this command writes first, one
// named at run time, or one that cannot be read is unresolvable for every
// rule; a file that does not exist holds nothing (curl warns and goes on).

// maxConfigDepth bounds -K files naming further -K files.
const maxConfigDepth = 8

// cmdEnv looks a variable up in the command's environment: its VAR=x
// prefixes (env's too) and the shell state's variables (export is not told
// apart from a plain assignment: a little wider).
func cmdEnv(env map[string]field, st *state) func(string) (field, bool) {
	return func(k string) (field, bool) {
		if v, ok := env[k]; ok {
			return v, true
		}
		if st.outVars[k] {
			return field{s: dynMark, dyn: true}, true
		}
		if v, ok := st.vars[k]; ok {
			return word(v), true
		}
		return field{}, false
	}
}

// configFile reads a configuration file a command reads for this call.
// found is false when it does not exist; ok is false when it was judged
// unresolvable (the reason already added).
func (a *analyzer) configFile(f field, st *state, how string) (b []byte, found, ok bool) {
	if f.dyn {
		a.all(fmt.Sprintf("%s reads options from a file named only at run time (%s)", how, f))
		return nil, false, false
	}
	p, ok := a.fileOnDisk(a.expandTilde(f.s), st, how, "reads options from")
	if !ok {
		return nil, false, false
	}
	b, err := pathguard.ReadRegular(p, maxScript)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, true
	case err != nil:
		a.all(fmt.Sprintf("%s reads options from %s, which cannot be read to check it", how, p))
		return nil, false, false
	case bytes.IndexByte(b, 0) >= 0:
		a.all(fmt.Sprintf("%s reads options from %s, which holds binary content", how, p))
		return nil, false, false
	}
	return b, true, true
}

// curlConfigArgs returns the arguments a curl config file holds, read as
// curl's parser reads them (curl(1), -K): one option a line, '#' comments;
// a long option may drop its dashes and then be followed by '=' or ':'; a
// parameter is a word, or a double-quoted string with \\ \" \t \n \r \v
// escapes (a backslash before any other character is dropped). A parameter
// is kept only for an option that takes one, as curl ignores any other.
func curlConfigArgs(b []byte) []string {
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		s := strings.TrimLeft(strings.TrimSuffix(line, "\r"), " \t")
		if s == "" || s[0] == '#' {
			continue
		}
		dashed := s[0] == '-'
		end := strings.IndexFunc(s, func(r rune) bool {
			return r == ' ' || r == '\t' || (!dashed && (r == '=' || r == ':'))
		})
		if end < 0 {
			end = len(s)
		}
		name, rest := s[:end], strings.TrimLeft(s[end:], " \t=:")
		if !dashed {
			name = "--" + name
		}
		param, has := "", rest != ""
		if strings.HasPrefix(rest, `"`) {
			param = unquoteCurl(rest[1:])
		} else if i := strings.IndexAny(rest, " \t"); i >= 0 {
			param = rest[:i]
		} else {
			param = rest
		}
		out = append(out, name)
		if has && curlTakesValue(name) {
			out = append(out, param)
		}
	}
	return out
}

// unquoteCurl reads a double-quoted config parameter up to its closing
// quote (or the line's end, as curl does).
func unquoteCurl(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return b.String()
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 'v':
				b.WriteByte('\v')
			default:
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// curlShortValued are curl's short options that take a value.
const curlShortValued = "AbcCdDeEFHKmoPQrtTuUwxXyYz"

func curlTakesValue(name string) bool {
	if strings.HasPrefix(name, "--") {
		return slices.Contains(curlValued, name[2:])
	}
	// -X DELETE on a config line: the value is the parameter unless it is
	// attached (-XDELETE, one word).
	return len(name) == 2 && strings.IndexByte(curlShortValued, name[1]) >= 0
}

// curlArgs returns curl's arguments with its configuration spliced in: the
// user's .curlrc first unless -q/--disable is the first argument, and each
// -K/--config file in place of the option that names it. With no
// configuration it returns c.args itself.
func (a *analyzer) curlArgs(c *cmd) []field {
	lookup := cmdEnv(c.env, c.st)
	var pre []field
	if len(c.args) == 0 || (c.args[0].s != "-q" && c.args[0].s != "--disable") {
		if rc, ok := a.curlrc(lookup, c.st.cwd); ok {
			pre = a.curlConfig(rc, c, "curl's default configuration", 1)
		}
	}
	p := parseOpts(c.args, optSpec{short: curlShortValued, long: curlValued})
	if len(pre) == 0 && !p.has("-K", "--config") {
		return c.args
	}
	out := append([]field{}, pre...)
	for _, o := range p.opts {
		if o.name == "-K" || o.name == "--config" {
			if o.has {
				out = append(out, a.curlConfig(o.val, c, "curl "+o.name, 1)...)
			}
			continue
		}
		out = appendOpt(out, o)
	}
	// A word only known at run time where an option could stand stays
	// before "--", so that it still counts as one.
	var ops []field
	for _, f := range p.operands {
		if f.dyn && f.optLike() {
			out = append(out, f)
		} else {
			ops = append(ops, f)
		}
	}
	return append(append(out, word("--")), ops...)
}

// appendOpt writes a parsed curl option back as arguments that parse the
// same way: a long option curl's table does not list as taking a value
// keeps its value attached (--name=v), so it is not read as a URL.
func appendOpt(out []field, o opt) []field {
	switch {
	case !o.has:
		return append(out, word(o.name))
	case strings.HasPrefix(o.name, "--") && !slices.Contains(curlValued, o.name[2:]):
		v := o.val
		v.s, v.src = o.name+"="+v.s, ""
		return append(out, v)
	}
	return append(out, word(o.name), o.val)
}

// curlrc names the config file curl reads by default: $CURL_HOME/.curlrc,
// else $XDG_CONFIG_HOME/curlrc, else ~/.curlrc — the first that exists.
func (a *analyzer) curlrc(lookup func(string) (field, bool), cwd string) (field, bool) {
	var cands []field
	for _, v := range []struct{ env, name string }{{"CURL_HOME", ".curlrc"}, {"XDG_CONFIG_HOME", "curlrc"}} {
		if d, ok := lookup(v.env); ok && d.s != "" {
			if d.dyn {
				return d, true // unresolvable, said by curlConfig
			}
			cands = append(cands, word(filepath.Join(d.s, v.name)))
		}
	}
	if a.home != "" {
		cands = append(cands, word(filepath.Join(a.home, ".curlrc")))
	}
	for _, f := range cands {
		if p, ok := cleanAbs(cwd, f.s); ok && (a.written[p] || exists(p)) {
			return f, true
		}
	}
	return field{}, false
}

// curlConfig reads one curl config file (or, for "-", the command's
// standard input) and returns its arguments, its own -K files spliced in.
func (a *analyzer) curlConfig(f field, c *cmd, how string, depth int) []field {
	if depth > maxConfigDepth {
		a.all(fmt.Sprintf("%s: config files nest more than %d deep", how, maxConfigDepth))
		return nil
	}
	var b []byte
	switch {
	case !f.dyn && f.s == "-":
		switch c.in.kind {
		case inText:
			if c.in.dyn {
				a.all(how + " reads options from standard input, partly only known at run time")
			}
			b = []byte(c.in.text)
		case inFile:
			f = c.in.file
		default:
			a.all(how + " reads options from standard input, which is not known here")
			return nil
		}
	}
	if b == nil {
		var found, ok bool
		if b, found, ok = a.configFile(f, c.st, how); !found || !ok {
			return nil
		}
	}
	var out []field
	args := curlConfigArgs(b)
	p := parseOpts(fields(args), optSpec{short: curlShortValued, long: curlValued})
	for _, o := range p.opts {
		if o.name == "-K" || o.name == "--config" {
			if o.has {
				out = append(out, a.curlConfig(o.val, c, how+" → "+o.val.s, depth+1)...)
			}
			continue
		}
		out = appendOpt(out, o)
	}
	// A config file's URLs are curl's as much as the command line's.
	for _, u := range p.operands {
		out = append(out, word("--url"), u)
	}
	return out
}

func fields(ss []string) []field {
	out := make([]field, len(ss))
	for i, s := range ss {
		out[i] = word(s)
	}
	return out
}

// exists reports whether a file is at p, following links as curl does.
func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// wgetArgs returns wget's arguments preceded by the options its startup
// files and -e commands set: the system wgetrc ($SYSTEM_WGETRC, else
// /etc/wgetrc) and the user's ($WGETRC, else ~/.wgetrc), or only the
// --config file; none with --no-config alone (wget(1), Startup File).
// Options on the command line come after, so theirs is the last word, as
// in wget.
func (a *analyzer) wgetArgs(c *cmd) []field {
	p := parseOpts(c.args, wgetSpec)
	lookup := cmdEnv(c.env, c.st)
	var files []field
	switch cfg, ok := p.value("--config"); {
	case ok:
		files = []field{cfg}
	case p.has("--no-config"):
	default:
		files = []field{word("/etc/wgetrc")}
		if v, ok := lookup("SYSTEM_WGETRC"); ok {
			files[0] = v
		}
		if v, ok := lookup("WGETRC"); ok {
			files = append(files, v)
		} else if a.home != "" {
			files = append(files, word(filepath.Join(a.home, ".wgetrc")))
		}
	}
	var cmds []field
	for _, f := range files {
		b, found, ok := a.configFile(f, c.st, "wget")
		if !found || !ok {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if s := strings.TrimSpace(line); s != "" && s[0] != '#' {
				cmds = append(cmds, word(s))
			}
		}
	}
	cmds = append(cmds, p.values("-e", "--execute")...)
	if len(cmds) == 0 {
		return c.args
	}
	return append(a.wgetrcOptions(cmds), c.args...)
}

// wgetrcOptions turns wgetrc commands (a startup file's lines, -e's
// values) into the command-line options they stand for, where those
// options choose what wget writes, reads, sends or how it names files.
func (a *analyzer) wgetrcOptions(cmds []field) []field {
	var out []field
	for _, e := range cmds {
		if e.dyn {
			a.add(SelfMod, true, "wget -e %s: a wgetrc command only known at run time may choose where it writes", e)
			continue
		}
		k, v, ok := strings.Cut(e.s, "=")
		if !ok {
			continue
		}
		val := word(strings.TrimSpace(v))
		on := wgetrcBool(val.s)
		switch strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(strings.TrimSpace(k))) {
		case "outputdocument":
			out = append(out, word("-O"), val)
		case "dirprefix":
			out = append(out, word("-P"), val)
		case "logfile":
			out = append(out, word("-o"), val)
		case "savecookies":
			out = append(out, word("--save-cookies"), val)
		case "method":
			out = append(out, word("--method"), val)
		case "bodydata":
			out = append(out, word("--body-data"), val)
		case "bodyfile":
			out = append(out, word("--body-file"), val)
		case "postdata":
			out = append(out, word("--post-data"), val)
		case "postfile":
			out = append(out, word("--post-file"), val)
		case "header":
			out = append(out, word("--header"), val)
		case "input":
			out = append(out, word("-i"), val)
		case "contentdisposition":
			if on {
				out = append(out, word("--content-disposition"))
			}
		case "trustservernames":
			if on {
				out = append(out, word("--trust-server-names"))
			}
		case "recursive":
			if on {
				out = append(out, word("-r"))
			}
		case "mirror":
			if on {
				out = append(out, word("-m"))
			}
		case "pagerequisites":
			if on {
				out = append(out, word("-p"))
			}
		case "dirstruct":
			if !on {
				out = append(out, word("-nd"))
			}
		case "addhostdir":
			if !on {
				out = append(out, word("-nH"))
			}
		}
	}
	return out
}

// wgetrcBool reads a wgetrc boolean: on, yes, 1 (and always) are true.
func wgetrcBool(s string) bool {
	switch strings.ToLower(s) {
	case "on", "yes", "1", "true", "always":
		return true
	}
	return false
}
