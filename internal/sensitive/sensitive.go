// Package sensitive decides which paths an unattended fix may touch: a
// built-in deny list, the project's extensions, and one-hop import lines.
//
// # What it owns
//
// [Policy.Classify] puts every repository-relative path in one of three
// classes. Denied wins over everything: a path is Denied if it is malformed
// (absolute, a ".." segment, a NUL or a backslash), if one of its word tokens
// names a deny word ([DenyWords]), if it matches a built-in deny glob
// ([DenyGlobs]) or if it matches one of the project's paths.sensitive globs.
// Otherwise it is Fixable if it matches paths.fixable or the test glob, and
// Unknown if it matches nothing. Unknown is sensitive: callers must treat it
// exactly like Denied ([Policy.Sensitive] does), so a project that configures
// nothing escalates everything.
//
// A path is also Denied when another file system would open it as a denied
// path: NTFS drops a segment's trailing dots and spaces and reads
// "name::$DATA" as the file, HFS+ ignores some invisible code points, both
// fold "ſ" to "s"; an NTFS 8.3 short name ("GITATT~1") is denied outright,
// since which long name it opens depends on the volume. See aliasOf.
//
// The deny list can only grow. A project adds globs; it cannot remove a
// built-in word or glob. fixrail.yaml, the file that holds the project's
// extension, is itself on the deny list, so an agent that shrinks it has
// touched a denied path and the whole fix escalates.
//
// # Word tokens
//
// Each path segment is split into word tokens on every character that is not
// a letter or digit and, in addition, on camelCase boundaries; digits stay
// with the letters before them. "AuthService.java" yields "authservice",
// "auth", "service" and "java"; "oauth2_client" yields "oauth2" and "client".
// Matching is case-insensitive. Each deny word has one of three match modes:
//
//   - contains: the token contains the stem anywhere. Used for stems that
//     almost never occur inside unrelated words (auth, crypt, secret,
//     credential, password, jwt, ...), so "basicauth", "bcrypt" and
//     "clientsecret" are caught even when written as one lowercase word.
//   - prefix: the token starts with the stem (signing, signature).
//   - exact: the token is the stem or the stem plus "s" (sso, rls, acl, ...).
//     These stems are too short to match inside other words: "sso" is in
//     "processor" and "rls" in "urls".
//
// "security" and "secure" are both covered by the contains-stem "secur", which
// also catches "insecure". "session", "token", "login", "key", "user" and
// "admin" are deliberately not deny words: they name large parts of ordinary
// code (a lexer's token, a web framework's session helpers), and escalating
// all of it would leave nothing to fix. Session stores and login flows that
// matter are almost always under an auth path; anything else belongs in the
// project's paths.sensitive. "**/api/**" and "**/models/**" are excluded for
// the same reason.
//
// # One-hop imports
//
// [ImportLines] extracts the import, require, use and include lines of a
// source file by its extension, and [Policy.CheckImports] tokenises each
// whole line the same way as a path. A file that imports an auth module is
// then treated as touching auth. This is a string match on the line, not
// module resolution.
//
// # Residuals
//
// These are known and accepted; incidents that hit them go to retro rather
// than being patched piecemeal.
//
//   - Lookalike false positives: "author.py", "authority", "coauthor",
//     "secretary", "securities", "immigration", "signature.go" in a type
//     checker, "tls" meaning thread-local storage, and import lines such as
//     "import author_bio" are Denied. The fix escalates; nothing unsafe
//     happens, but yield drops.
//   - Concatenated exact-mode words are missed: "mysso.py" and "userrls.sql"
//     do not match sso or rls (camelCase "mySSO" does).
//   - Homoglyphs and transliterations ("аuth" with a Cyrillic a, "avtorizaciya")
//     are not normalised.
//   - Imports are one hop and by string: dynamic imports without a literal,
//     relative imports whose text names no deny word ("from . import x"),
//     re-export barrels and any chain of depth two or more are missed. A
//     multi-line import contributes only its first line (JavaScript's closing
//     "} from '...'" line is also taken). Commented-out imports are included,
//     which can only add denials. A stricter project escalates any diff that
//     adds or changes an import.
//   - The built-in list is a floor, not a model of every project: customer
//     data and tenancy paths must come from paths.sensitive.
package sensitive

import (
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Class is the outcome of classifying one path.
type Class int

// The three classes. Only Fixable may be written by an unattended fix.
const (
	// Fixable paths match paths.fixable or the test glob and nothing denied.
	Fixable Class = iota
	// Denied paths match the deny list, the project's sensitive globs, or are
	// malformed.
	Denied
	// Unknown paths match nothing. Callers must treat them as sensitive.
	Unknown
)

// String returns "fixable", "denied" or "unknown".
func (c Class) String() string {
	switch c {
	case Fixable:
		return "fixable"
	case Denied:
		return "denied"
	case Unknown:
		return "unknown"
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

// Verdict is the classification of one path, or of one import line for
// [Policy.CheckImports].
type Verdict struct {
	// Path is the cleaned path (the input as given when it is invalid), or
	// the import line's text.
	Path  string
	Class Class
	// Rule names what matched: "invalid-path", "word:auth",
	// "alias:glob:fixrail.yaml (as fixrail.yaml)" (the name another file
	// system opens; see aliasOf), "alias:ntfs-short-name GITATT~1",
	// "glob:**/*.pem", "config:paths.sensitive[0] secure/**",
	// "fixable:src/**", "test:tests/**", "import:auth". It is "" for Unknown.
	Rule string
}

// Policy is the project's part of the classification: globs in doublestar
// syntax, relative to the repository root. The built-in deny list always
// applies in addition. A nil *Policy classifies with the built-ins only, so
// nothing is Fixable.
type Policy struct {
	// Fixable globs (paths.fixable) are paths a fix may write.
	Fixable []string
	// SensitiveGlobs (paths.sensitive) extend the deny list. (The field
	// cannot be called Sensitive: that is the method.)
	SensitiveGlobs []string
	// Evidence globs are where a fix type's evidence lives (the bug type's
	// test.path_glob, for its reproducing test); a match is Fixable unless
	// denied.
	Evidence []string
}

// New returns a Policy after checking every glob. The error names the
// config key and the bad pattern. Empty and absolute patterns are rejected
// too: paths are relative, so such a pattern could never match and would
// silently weaken the policy.
func New(fixable, sensitive []string, evidence ...string) (*Policy, error) {
	for i, g := range fixable {
		if err := validate(g); err != nil {
			return nil, fmt.Errorf("paths.fixable[%d] %q: %w", i, g, err)
		}
	}
	for i, g := range sensitive {
		if err := validate(g); err != nil {
			return nil, fmt.Errorf("paths.sensitive[%d] %q: %w", i, g, err)
		}
	}
	var ev []string
	for _, g := range evidence {
		if g == "" {
			continue
		}
		if err := validate(g); err != nil {
			return nil, fmt.Errorf("evidence glob %q: %w", g, err)
		}
		ev = append(ev, g)
	}
	return &Policy{
		Fixable:        append([]string(nil), fixable...),
		SensitiveGlobs: append([]string(nil), sensitive...),
		Evidence:       ev,
	}, nil
}

func validate(g string) error {
	switch {
	case g == "":
		return fmt.Errorf("empty glob")
	case strings.HasPrefix(g, "/"):
		return fmt.Errorf("glob is absolute; globs are relative to the repository root")
	case !doublestar.ValidatePattern(g):
		return fmt.Errorf("invalid glob")
	}
	return nil
}

// Classify returns the verdict for one repository-relative, slash-separated
// path. Denied wins over everything; then a fixable or test glob match makes
// the path Fixable; otherwise it is Unknown.
func (p *Policy) Classify(name string) Verdict {
	clean, ok := cleanPath(name)
	if !ok {
		return Verdict{Path: name, Class: Denied, Rule: "invalid-path"}
	}
	if rule, denied := p.denied(clean); denied {
		return Verdict{Path: clean, Class: Denied, Rule: rule}
	}
	if rule, denied := p.aliasDenied(clean); denied {
		return Verdict{Path: clean, Class: Denied, Rule: rule}
	}
	if p != nil {
		for _, g := range p.Fixable {
			if match(g, clean) {
				return Verdict{Path: clean, Class: Fixable, Rule: "fixable:" + g}
			}
		}
		for _, g := range p.Evidence {
			if match(g, clean) {
				return Verdict{Path: clean, Class: Fixable, Rule: "test:" + g}
			}
		}
	}
	return Verdict{Path: clean, Class: Unknown}
}

// Sensitive reports whether v must not be written by an unattended fix:
// anything not Fixable, Unknown included.
func (p *Policy) Sensitive(v Verdict) bool {
	return v.Class != Fixable
}

// denied checks the deny list (built-in globs, words, then the project's
// sensitive globs) against a clean path.
func (p *Policy) denied(clean string) (rule string, ok bool) {
	for _, g := range denyGlobs {
		if matchFold(g, clean) {
			return "glob:" + g, true
		}
	}
	for _, seg := range strings.Split(clean, "/") {
		if w, ok := deniedWord(seg); ok {
			return "word:" + w, true
		}
	}
	if p != nil {
		for i, g := range p.SensitiveGlobs {
			m, err := matchFoldErr(g, clean)
			if m || err != nil {
				// A pattern that cannot be evaluated (a Policy built
				// without New) fails closed.
				return fmt.Sprintf("config:paths.sensitive[%d] %s", i, g), true
			}
		}
	}
	return "", false
}

// cleanPath validates and cleans a path. It refuses the empty path,
// absolute paths, Windows drive prefixes, ".." segments (before cleaning,
// so "a/../b" is refused rather than resolved), NUL and backslashes.
func cleanPath(name string) (string, bool) {
	if name == "" || strings.HasPrefix(name, "/") ||
		strings.ContainsAny(name, "\x00\\") || hasDrive(name) {
		return "", false
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == ".." {
			return "", false
		}
	}
	clean := path.Clean(name)
	if clean == "." {
		return "", false
	}
	return clean, true
}

// hasDrive reports a Windows drive prefix such as "C:".
func hasDrive(name string) bool {
	return len(name) >= 2 && name[1] == ':' &&
		('a' <= name[0] && name[0] <= 'z' || 'A' <= name[0] && name[0] <= 'Z')
}

// match is the case-sensitive match used for fixable and test globs: being
// strict there can only make fewer paths Fixable.
func match(g, name string) bool {
	m, err := doublestar.Match(g, name)
	return err == nil && m
}

// matchFold is the case-insensitive match used for deny globs: on a
// case-insensitive filesystem ".GITHUB/workflows" is ".github/workflows".
func matchFold(g, name string) bool {
	m, err := matchFoldErr(g, name)
	return m || err != nil
}

func matchFoldErr(g, name string) (bool, error) {
	m, err := doublestar.Match(g, name)
	if m || err != nil {
		return m, err
	}
	return doublestar.Match(strings.ToLower(g), strings.ToLower(name))
}
