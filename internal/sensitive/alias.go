package sensitive

import (
	"regexp"
	"strings"

	"github.com/fixrail/fixrail/internal/fsname"
)

// A fix is reviewed and merged on Linux, but its tree is checked out on
// other file systems too: a reviewer's Mac, a Windows runner, an agent's
// workstation. There a name the deny list does not match on the bytes can
// open a file it does: NTFS's Win32 layer drops a segment's trailing dots
// and spaces and reads "name::$DATA" as the file itself, HFS+ ignores a set
// of invisible code points, and both fold case beyond ASCII ("ſ" is "s",
// U+212A KELVIN SIGN is "k"). aliasOf is the name such a system would open;
// the deny list is checked against it as well, so ".gitattributes." and
// ".git\u200cattributes" are what they open: .gitattributes.

// aliasOf is clean as NTFS or HFS+ would open it, segment by segment.
func aliasOf(clean string) string {
	segs := strings.Split(clean, "/")
	for i, s := range segs {
		s = strings.Map(func(r rune) rune {
			if fsname.Ignorable(r) {
				return -1
			}
			return fsname.ASCIIFold(r)
		}, s)
		// "a:b" is stream b of a; "a::$DATA" is a's own contents.
		if j := strings.IndexByte(s, ':'); j >= 0 {
			s = s[:j]
		}
		s = strings.TrimRight(s, ". ")
		segs[i] = s
	}
	return strings.Join(segs, "/")
}

// shortName matches a segment in the shape of an NTFS 8.3 short name
// ("GITATT~1", "CLAUDE~1.MD"): such a name opens whichever long name the
// volume gave it, which nothing here can know, so it is denied outright.
var shortName = regexp.MustCompile(`^[^.~]{1,6}~[1-9][0-9]{0,5}(\.[^.]{0,3})?$`)

// aliasDenied is the deny-list rule that another file system's reading of
// clean matches, or "".
func (p *Policy) aliasDenied(clean string) (string, bool) {
	for _, s := range strings.Split(clean, "/") {
		if shortName.MatchString(s) {
			return "alias:ntfs-short-name " + s, true
		}
	}
	alias := aliasOf(clean)
	if alias == clean {
		return "", false
	}
	if strings.Contains("/"+alias+"/", "//") {
		// A segment that is nothing but dots, spaces or ignored code
		// points: NTFS and HFS+ name no such file the same way.
		return "alias:empty-segment", true
	}
	if rule, ok := p.denied(alias); ok {
		return "alias:" + rule + " (as " + alias + ")", true
	}
	return "", false
}
