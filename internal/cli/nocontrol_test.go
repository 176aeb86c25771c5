package cli

import (
	"fmt"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/testscript"
)

// nocontrol file...: no file holds a control a terminal or a renderer acts
// on. "stdout" and "stderr" name the last command's streams. The sets are
// spelled out here, not taken from package untrusted, so that a class the
// escape stops covering turns the scenario red.
func cmdNoControl(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: nocontrol file...")
	}
	for _, name := range args {
		if bad := firstControl(ts.ReadFile(name)); bad != "" {
			ts.Fatalf("%s holds %s", name, bad)
		}
	}
}

// firstControl names the first forbidden rune in s: C0 but a newline and a
// tab, DEL, C1, a bidirectional control, a zero-width or invisible one, a
// line or paragraph separator, a tag, invalid UTF-8; "" if none.
func firstControl(s string) string {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return fmt.Sprintf("invalid UTF-8 at byte %d", i)
			}
		}
		bad := (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f ||
			(r >= 0x80 && r <= 0x9f) ||
			(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c ||
			(r >= 0x200b && r <= 0x200d) || (r >= 0x2060 && r <= 0x2064) || r == 0xfeff || r == 0x00ad || r == 0x180e ||
			r == 0x2028 || r == 0x2029 || (r >= 0xe0000 && r <= 0xe007f)
		if bad {
			return fmt.Sprintf("%U at byte %d: %q", r, i, s[max(0, i-40):min(len(s), i+40)])
		}
	}
	return ""
}
