package policy

import "strings"

// gitArg says whether a git option takes a value, the way git's
// parse-options declares it.
type gitArg uint8

const (
	gitFlag     gitArg = iota // no value
	gitValue                  // a value: attached (-U3, --unified=3) or the next word
	gitOptValue               // PARSE_OPT_OPTARG: a value only when attached (--track=direct)
)

// gitOption is one entry of a git subcommand's option table: its long name
// (without dashes), its short letter (0 for none) and its argument.
type gitOption struct {
	long  string
	short byte
	arg   gitArg
}

// The option tables of git checkout, restore and switch as builtin/checkout.c
// declares them (checkout_options, restore_options, switch_options and the
// add_common_*, add_checkout_path_options groups they share), as of git
// 2.54. Reading an option's value as a value, and not as a revision or a
// path, is what tells `git checkout --unified 3 main` (a request that git
// refuses: -U needs --patch) from `git checkout 3 main` (a checkout of the
// path main from revision 3).
var (
	gitCommonOpts = []gitOption{
		{"quiet", 'q', gitFlag}, {"recurse-submodules", 0, gitOptValue}, {"progress", 0, gitFlag},
		{"merge", 'm', gitFlag}, {"conflict", 0, gitValue},
	}
	gitSwitchBranchOpts = []gitOption{
		{"detach", 'd', gitFlag}, {"track", 't', gitOptValue}, {"force", 'f', gitFlag},
		{"orphan", 0, gitValue}, {"overwrite-ignore", 0, gitFlag}, {"ignore-other-worktrees", 0, gitFlag},
	}
	gitCheckoutPathOpts = []gitOption{
		{"ours", '2', gitFlag}, {"theirs", '3', gitFlag}, {"patch", 'p', gitFlag}, {"auto-advance", 0, gitFlag},
		{"unified", 'U', gitValue}, {"inter-hunk-context", 0, gitValue}, {"ignore-skip-worktree-bits", 0, gitFlag},
		{"pathspec-from-file", 0, gitValue}, {"pathspec-file-nul", 0, gitFlag},
	}
	gitCheckoutOpts = gitOptTable(gitCommonOpts, gitSwitchBranchOpts, gitCheckoutPathOpts, []gitOption{
		{"", 'b', gitValue}, {"", 'B', gitValue}, {"", 'l', gitFlag}, {"guess", 0, gitFlag}, {"overlay", 0, gitFlag},
	})
	gitRestoreOpts = gitOptTable(gitCommonOpts, gitCheckoutPathOpts, []gitOption{
		{"source", 's', gitValue}, {"staged", 'S', gitFlag}, {"worktree", 'W', gitFlag},
		{"ignore-unmerged", 0, gitFlag}, {"overlay", 0, gitFlag},
	})
	gitSwitchOpts = gitOptTable(gitCommonOpts, gitSwitchBranchOpts, []gitOption{
		{"create", 'c', gitValue}, {"force-create", 'C', gitValue}, {"guess", 0, gitFlag}, {"discard-changes", 0, gitFlag},
	})
)

// gitRmOpts is git rm's table (builtin/rm.c, builtin_rm_options).
var gitRmOpts = []gitOption{
	{"dry-run", 'n', gitFlag}, {"quiet", 'q', gitFlag}, {"cached", 0, gitFlag}, {"force", 'f', gitFlag},
	{"", 'r', gitFlag}, {"ignore-unmatch", 0, gitFlag}, {"sparse", 0, gitFlag},
	{"pathspec-from-file", 0, gitValue}, {"pathspec-file-nul", 0, gitFlag},
}

// gitUpdateRefOpts is git update-ref's table (builtin/update-ref.c).
var gitUpdateRefOpts = []gitOption{
	{"", 'm', gitValue}, {"", 'd', gitFlag}, {"", 'z', gitFlag}, {"no-deref", 0, gitFlag},
	{"stdin", 0, gitFlag}, {"create-reflog", 0, gitFlag}, {"batch-updates", 0, gitFlag},
}

func gitOptTable(groups ...[]gitOption) []gitOption {
	var t []gitOption
	for _, g := range groups {
		t = append(t, g...)
	}
	return t
}

// gitParsed is a git command line read against an option table. Options are
// named by their long name, or "-x" for one that has only a short letter.
type gitParsed struct {
	set      map[string]bool    // options in effect (a later --no-x clears x)
	vals     map[string][]field // the values given to each option
	operands []field            // words before "--" that are not options
	paths    []field            // words after "--"
	dashdash bool
	unknown  []string // options the table does not know (git refuses them; a newer git may not)
}

// parseGitOpts reads args the way git's parse-options does: options and
// operands in any order until "--" (or --end-of-options); short options
// clustered (-fq, -U3); a long option by any unambiguous prefix (--sour),
// with --no- to negate it; a value attached or, for a value option, in the
// next word. What the table cannot settle is read the way that decides
// more: an unknown option is taken as a flag (its value, if a newer git
// takes one, stays an operand), an ambiguous prefix as every flag it
// could name, the letters after an optional-value short option (-tf) as
// its value and as flags. A word only known at run time where an option could stand
// is kept as an operand (the callers treat it as unresolvable).
func parseGitOpts(args []field, table []gitOption) gitParsed {
	p := gitParsed{set: map[string]bool{}, vals: map[string][]field{}}
	name := func(o gitOption) string {
		if o.long == "" {
			return "-" + string(o.short)
		}
		return o.long
	}
	endOpts := false
	for i := 0; i < len(args); i++ {
		f := args[i]
		switch {
		case f.s == "--":
			p.dashdash = true
			p.paths = append(p.paths, args[i+1:]...)
			return p
		case f.s == "--end-of-options" && !endOpts:
			endOpts = true
		case endOpts, f.dyn && f.optLike(), !f.optLike():
			p.operands = append(p.operands, f)
		case strings.HasPrefix(f.s, "--"):
			key, val, eq := strings.Cut(f.s[2:], "=")
			neg := false
			cands := gitLongMatch(key, table)
			if len(cands) == 0 {
				if k, ok := strings.CutPrefix(key, "no-"); ok {
					if cands = gitLongMatch(k, table); len(cands) > 0 {
						neg = true
					}
				}
			}
			switch {
			case len(cands) == 0:
				p.unknown = append(p.unknown, "--"+key)
			case len(cands) > 1:
				for _, o := range cands {
					if o.arg != gitValue {
						p.set[name(o)] = !neg
					}
				}
			default:
				o := cands[0]
				n := name(o)
				p.set[n] = !neg
				switch {
				case neg:
				case eq:
					p.vals[n] = append(p.vals[n], field{s: val, dyn: f.dyn})
				case o.arg == gitValue && i+1 < len(args):
					i++
					p.vals[n] = append(p.vals[n], args[i])
				}
			}
		default:
			cl := f.s[1:]
			for j := 0; j < len(cl); j++ {
				o, ok := gitShort(cl[j], table)
				if !ok {
					p.unknown = append(p.unknown, "-"+cl[j:j+1])
					continue
				}
				n := name(o)
				p.set[n] = true
				if o.arg == gitFlag {
					continue
				}
				if j+1 < len(cl) {
					p.vals[n] = append(p.vals[n], field{s: cl[j+1:], dyn: f.dyn})
					if o.arg == gitOptValue {
						// -tf: git 2.35 and later read f as --track's
						// value (and refuse it); before, -t took none
						// and this was -t -f. Both readings count.
						continue
					}
				} else if o.arg == gitValue && i+1 < len(args) {
					i++
					p.vals[n] = append(p.vals[n], args[i])
				}
				break
			}
		}
	}
	return p
}

// gitLongMatch resolves a long option the way git does: an exact name, else
// every option the word is a prefix of.
func gitLongMatch(key string, table []gitOption) []gitOption {
	var out []gitOption
	for _, o := range table {
		if o.long == "" {
			continue
		}
		if o.long == key {
			return []gitOption{o}
		}
		if key != "" && strings.HasPrefix(o.long, key) {
			out = append(out, o)
		}
	}
	return out
}

func gitShort(c byte, table []gitOption) (gitOption, bool) {
	for _, o := range table {
		if o.short == c {
			return o, true
		}
	}
	return gitOption{}, false
}

func (p gitParsed) has(names ...string) bool {
	for _, n := range names {
		if p.set[n] {
			return true
		}
	}
	return false
}
