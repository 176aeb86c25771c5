package policy

import (
	"fmt"
	"strings"
)

// sedEffects is what a sed script does beyond editing its stream: GNU
// sed's e command runs a shell command (or, bare or as the s command's e
// flag, the pattern space), and w, W and the s command's w flag write
// files.
type sedEffects struct {
	runs        []string // the commands of e COMMAND
	runsPattern bool     // e alone or s///e: the pattern space runs
	writes      []string // the files of w, W and s///w
	unread      string   // why the script could not be read to its end; "" when it was
}

// sedScript reads a sed script as GNU sed parses it: commands separated by
// newlines and semicolons, each after up to two addresses; a, i, c, r, R,
// w, W and e take the rest of their line; s and y take delimited parts. A
// part only known at run time (dynMark) may stand in an address, a
// regular expression, a replacement, a file name or a command's text; as a
// command it leaves the script unread.
func sedScript(s string) sedEffects {
	var e sedEffects
	i := 0
	blanks := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	toEOL := func() string { // the rest of the line; a backslash-newline continues it
		var b strings.Builder
		for i < len(s) && s[i] != '\n' {
			if s[i] == '\\' && i+1 < len(s) {
				b.WriteByte(s[i+1])
				i += 2
				continue
			}
			b.WriteByte(s[i])
			i++
		}
		return b.String()
	}
	// delimited reads up to the next delim not escaped by a backslash.
	delimited := func(delim byte) bool {
		for i < len(s) {
			switch s[i] {
			case '\\':
				i += 2
				continue
			case delim:
				i++
				return true
			}
			i++
		}
		return false
	}
	dynAddr := false // the last address was a run-time part, which may hold the command too
	address := func() bool {
		switch {
		case strings.HasPrefix(s[i:], dynMark):
			i += len(dynMark)
			dynAddr = true
		case i < len(s) && s[i] >= '0' && s[i] <= '9', i < len(s) && (s[i] == '+' || s[i] == '~'):
			i++
			for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
		case i < len(s) && s[i] == '$':
			i++
		case i < len(s) && (s[i] == '/' || s[i] == '\\'):
			delim := byte('/')
			if s[i] == '\\' {
				if i+1 >= len(s) {
					return false
				}
				delim = s[i+1]
				i++
			}
			i++
			if !delimited(delim) {
				return false
			}
			for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		}
		return true
	}
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', ';':
			i++
			continue
		case '#':
			toEOL()
			continue
		}
		dynAddr = false
		if !address() {
			e.unread = "an address is not closed"
			return e
		}
		blanks()
		if i < len(s) && s[i] == ',' {
			i++
			blanks()
			if !address() {
				e.unread = "an address is not closed"
				return e
			}
		}
		blanks()
		for i < len(s) && (s[i] == '!' || s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) || s[i] == '\n' || s[i] == ';' {
			if dynAddr {
				e.unread = "a command is only known at run time"
				return e
			}
			if i >= len(s) {
				break
			}
			e.unread = "an address has no command"
			return e
		}
		if strings.HasPrefix(s[i:], dynMark) {
			e.unread = "a command is only known at run time"
			return e
		}
		cmd := s[i]
		i++
		switch cmd {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'l', 'L', 'q', 'Q':
			blanks()
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case ':', 'b', 't', 'T', 'v':
			for i < len(s) && s[i] != '\n' && s[i] != ';' && (cmd == ':' || s[i] != '}') {
				i++
			}
		case 'a', 'i', 'c':
			blanks()
			if i < len(s) && s[i] == '\\' {
				i++
				if i < len(s) && s[i] == '\n' {
					i++
				}
			}
			toEOL()
		case 'r', 'R':
			blanks()
			toEOL()
		case 'w', 'W':
			blanks()
			e.write(toEOL())
		case 'e':
			blanks()
			if c := strings.TrimSpace(toEOL()); c != "" {
				e.runs = append(e.runs, c)
			} else {
				e.runsPattern = true
			}
		case 's', 'y':
			if i >= len(s) || s[i] == '\n' || s[i] == '\\' {
				e.unread = fmt.Sprintf("its %c command has no delimiter", cmd)
				return e
			}
			delim := s[i]
			i++
			pattern := delimited(delim) // the regular expression (y: the source letters)
			if !pattern || !delimited(delim) {
				e.unread = fmt.Sprintf("its %c command is not closed", cmd)
				return e
			}
			if cmd == 'y' {
				break
			}
		flags:
			for i < len(s) {
				switch c := s[i]; {
				case c == 'g' || c == 'p' || c == 'i' || c == 'I' || c == 'm' || c == 'M' || c >= '0' && c <= '9':
					i++
				case c == 'e':
					e.runsPattern = true
					i++
				case c == 'w':
					i++
					blanks()
					e.write(toEOL())
					break flags
				default:
					break flags
				}
			}
		default:
			e.unread = fmt.Sprintf("sed has no command %q", cmd)
			return e
		}
	}
	return e
}

func (e *sedEffects) write(name string) {
	switch name {
	case "/dev/stdout", "/dev/stderr":
		return
	}
	e.writes = append(e.writes, name)
}
