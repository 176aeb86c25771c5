package policy

import (
	"slices"
	"strings"
)

// optSpec describes a command's options well enough to find its operands.
type optSpec struct {
	short string   // short options that take a value (attached or next word)
	long  []string // long options that take a value (--name=v or --name v)
	posix bool     // options end at the first operand, as for wrappers
}

type opt struct {
	name string // "-x" or "--name"
	val  field
	has  bool // a value was given
}

type parsed struct {
	opts     []opt
	operands []field
	before   []int // for each operand, how many of opts came before it (tar -C is positional)
	dyn      bool  // a word only known at run time stood where an option could be
}

func (p *parsed) operand(fs ...field) {
	for _, f := range fs {
		p.operands = append(p.operands, f)
		p.before = append(p.before, len(p.opts))
	}
}

// parseOpts separates options from operands in getopt style: short options
// may be clustered (-fu, -oValue), long options take --name=value or, when
// listed in sp.long, --name value; "--" ends the options.
func parseOpts(args []field, sp optSpec) parsed {
	var p parsed
	for i := 0; i < len(args); i++ {
		f := args[i]
		switch {
		case f.dyn && f.optLike():
			p.dyn = true
			if sp.posix {
				p.operand(args[i:]...)
				return p
			}
			p.operand(f)
		case f.s == "--":
			p.operand(args[i+1:]...)
			return p
		case !f.optLike():
			if sp.posix {
				p.operand(args[i:]...)
				return p
			}
			p.operand(f)
		case strings.HasPrefix(f.s, "--"):
			name, val, eq := strings.Cut(f.s[2:], "=")
			o := opt{name: "--" + name}
			if eq {
				o.val, o.has = field{s: val, dyn: f.dyn}, true
			} else if slices.Contains(sp.long, name) && i+1 < len(args) {
				i++
				o.val, o.has = args[i], true
			}
			p.opts = append(p.opts, o)
		default:
			cl := f.s[1:]
			for j := 0; j < len(cl); j++ {
				o := opt{name: "-" + cl[j:j+1]}
				if strings.IndexByte(sp.short, cl[j]) >= 0 {
					if j+1 < len(cl) {
						o.val, o.has = field{s: cl[j+1:], dyn: f.dyn}, true
					} else if i+1 < len(args) {
						i++
						o.val, o.has = args[i], true
					}
					p.opts = append(p.opts, o)
					break
				}
				p.opts = append(p.opts, o)
			}
		}
	}
	return p
}

// has reports whether any of the named options was given.
func (p parsed) has(names ...string) bool {
	for _, o := range p.opts {
		if slices.Contains(names, o.name) {
			return true
		}
	}
	return false
}

// value returns the value of the last of the named options given with one.
func (p parsed) value(names ...string) (field, bool) {
	var v field
	found := false
	for _, o := range p.opts {
		if o.has && slices.Contains(names, o.name) {
			v, found = o.val, true
		}
	}
	return v, found
}

// values returns every value given to the named options.
func (p parsed) values(names ...string) []field {
	var out []field
	for _, o := range p.opts {
		if o.has && slices.Contains(names, o.name) {
			out = append(out, o.val)
		}
	}
	return out
}

// longPrefix resolves a possibly abbreviated long option (GNU getopt and git
// accept any unambiguous prefix) against the known names. It returns every
// candidate, so a caller can treat an ambiguous abbreviation conservatively.
func longPrefix(name string, known []string) []string {
	if slices.Contains(known, name) {
		return []string{name}
	}
	var out []string
	for _, k := range known {
		if name != "" && strings.HasPrefix(k, name) {
			out = append(out, k)
		}
	}
	return out
}

// firstOperand skips leading options (with the given value-taking ones) and
// returns the index of the first operand, or -1. It is for CLIs with global
// options before a subcommand (docker, kubectl, aws, npm).
func firstOperand(args []field, short string, long []string) int {
	for i := 0; i < len(args); i++ {
		f := args[i]
		if f.s == "--" {
			if i+1 < len(args) {
				return i + 1
			}
			return -1
		}
		if !f.optLike() {
			return i
		}
		if strings.HasPrefix(f.s, "--") {
			name, _, eq := strings.Cut(f.s[2:], "=")
			if !eq && slices.Contains(long, name) {
				i++
			}
			continue
		}
		if len(f.s) == 2 && strings.IndexByte(short, f.s[1]) >= 0 {
			i++
		}
	}
	return -1
}

func statics(fs []field) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		if !f.dyn {
			out = append(out, f.s)
		}
	}
	return out
}

func anyDyn(fs []field) bool {
	for _, f := range fs {
		if f.dyn {
			return true
		}
	}
	return false
}
