package policy

import "strings"

// exEffects is what editor commands given on the command line or standard
// input do beyond editing: run shell commands (vi's :!cmd, :r !cmd,
// :w !cmd, :terminal; ed's !cmd), run code (:python, :lua, a call of
// system()), and write files other than the one edited (:w FILE,
// :saveas FILE; ed's w FILE).
type exEffects struct {
	runs   []string // shell commands
	code   []exCode // code in another language
	writes []string // files written
	opened []string // files opened with :edit and kin, which a bare :w then writes
	bareW  bool     // a :w with no file
	unread string   // why a command could not be read; "" when all were
}

type exCode struct{ lang, text string }

// exRunners are the functions of Vim's expression language that run
// programs or change files, wherever an expression stands (:call, :let,
// :echo, s/x/\=…/).
var exRunners = []string{"system(", "systemlist(", "job_start(", "jobstart(", "termopen(", "libcall(", "libcallnr(",
	"writefile(", "delete(", "rename(", "mkdir(", "setfperm(", "execute(", "win_execute(", "term_start("}

// vimEx reads one Ex command line as Vim does: commands separated by "|"
// (except where the command takes the rest of the line: :!, :normal,
// :global and the interpreters), each after an optional range, with a
// bang and arguments.
func vimEx(line string, e *exEffects) {
	for line != "" {
		line = strings.TrimLeft(line, " \t:")
		line = skipExRange(line)
		if line == "" {
			return
		}
		if line[0] == '!' {
			e.runs = append(e.runs, strings.TrimSpace(line[1:]))
			return
		}
		n := 0
		for n < len(line) && (line[n] >= 'a' && line[n] <= 'z' || line[n] >= 'A' && line[n] <= 'Z' || n > 0 && line[n] >= '0' && line[n] <= '9') {
			n++
		}
		if n == 0 {
			return // a mark, a register or an operator this reading does not need
		}
		name, rest := line[:n], line[n:]
		rest = strings.TrimPrefix(rest, "!")
		args, next := rest, ""
		if !exTakesBar(name) {
			if i := strings.IndexByte(rest, '|'); i >= 0 {
				args, next = rest[:i], rest[i+1:]
			}
		}
		args = strings.TrimSpace(args)
		if lang, ok := exInterpreters[name]; ok {
			e.code = append(e.code, exCode{lang: lang, text: args})
			return
		}
		for _, r := range exRunners {
			if strings.Contains(args, r) {
				e.code = append(e.code, exCode{lang: "vim", text: name + rest})
				break
			}
		}
		switch {
		case exAbbrev(name, "w", "write") || exAbbrev(name, "sav", "saveas") || exAbbrev(name, "wq", "wq") ||
			exAbbrev(name, "x", "xit") || exAbbrev(name, "exi", "exit") || exAbbrev(name, "up", "update") ||
			exAbbrev(name, "wn", "wnext") || exAbbrev(name, "wN", "wNext") || exAbbrev(name, "wp", "wprevious"):
			switch {
			case strings.HasPrefix(args, "!"):
				e.runs = append(e.runs, strings.TrimSpace(args[1:]))
				return
			case args == "":
				e.bareW = true
			default:
				e.writes = append(e.writes, exFileArg(strings.TrimPrefix(args, ">>")))
			}
		case exAbbrev(name, "r", "read"):
			if strings.HasPrefix(args, "!") {
				e.runs = append(e.runs, strings.TrimSpace(args[1:]))
				return
			}
		case exAbbrev(name, "e", "edit") || exAbbrev(name, "new", "new") || exAbbrev(name, "vne", "vnew") ||
			exAbbrev(name, "sp", "split") || exAbbrev(name, "vs", "vsplit") || exAbbrev(name, "tabe", "tabedit") ||
			exAbbrev(name, "tabnew", "tabnew") || exAbbrev(name, "bad", "badd") || exAbbrev(name, "f", "file"):
			if strings.HasPrefix(args, "!") {
				e.runs = append(e.runs, strings.TrimSpace(args[1:]))
				return
			}
			if args != "" {
				e.opened = append(e.opened, exFileArg(args))
			}
		case exAbbrev(name, "te", "terminal"):
			e.runs = append(e.runs, args)
			return
		case exAbbrev(name, "exe", "execute") || exAbbrev(name, "pyf", "pyfile") || name == "py3f" || name == "py3file" || name == "pyxfile" ||
			exAbbrev(name, "luaf", "luafile") || exAbbrev(name, "rubyf", "rubyfile") || exAbbrev(name, "so", "source") ||
			exAbbrev(name, "ru", "runtime"):
			e.unread = ":" + name + " runs code the hook does not read"
			return
		case exAbbrev(name, "sil", "silent") || exAbbrev(name, "uns", "unsilent") || exAbbrev(name, "noa", "noautocmd") ||
			exAbbrev(name, "keepj", "keepjumps") || exAbbrev(name, "keepa", "keepalt") || exAbbrev(name, "kee", "keepmarks") ||
			exAbbrev(name, "loc", "lockmarks") || exAbbrev(name, "keepp", "keeppatterns") || exAbbrev(name, "vert", "vertical") ||
			exAbbrev(name, "tab", "tab") || exAbbrev(name, "bo", "botright") || exAbbrev(name, "to", "topleft") ||
			exAbbrev(name, "windo", "windo") || exAbbrev(name, "bufdo", "bufdo") || exAbbrev(name, "argdo", "argdo") ||
			exAbbrev(name, "cdo", "cdo") || exAbbrev(name, "ld", "ldo") || exAbbrev(name, "tabdo", "tabdo") ||
			exAbbrev(name, "g", "global") || exAbbrev(name, "v", "vglobal"):
			if exAbbrev(name, "g", "global") || exAbbrev(name, "v", "vglobal") {
				// :g/pat/cmd: the command after the pattern.
				if len(args) > 1 {
					d := args[0]
					if i := strings.IndexByte(args[1:], d); i >= 0 {
						args = args[i+2:]
					}
				}
			}
			vimEx(args, e)
			return
		}
		line = next
	}
}

// exInterpreters are the Ex commands that run their argument as code in
// another language, by their names and abbreviations.
var exInterpreters = map[string]string{
	"py": "python", "pyt": "python", "pyth": "python", "pytho": "python", "python": "python",
	"py3": "python", "python3": "python", "pyx": "python", "pythonx": "python",
	"pydo": "python", "py3do": "python", "pyxdo": "python",
	"lua": "lua", "luado": "lua",
	"pe": "perl", "per": "perl", "perl": "perl", "perld": "perl", "perldo": "perl",
	"rub": "ruby", "ruby": "ruby", "rubyd": "ruby", "rubydo": "ruby",
}

// exTakesBar reports whether an Ex command sees "|" as part of its
// argument (":help :bar").
func exTakesBar(name string) bool {
	if _, ok := exInterpreters[name]; ok {
		return true
	}
	for _, c := range [][2]string{{"norm", "normal"}, {"g", "global"}, {"v", "vglobal"}, {"te", "terminal"}, {"windo", "windo"},
		{"bufdo", "bufdo"}, {"argdo", "argdo"}, {"tabdo", "tabdo"}, {"cdo", "cdo"}, {"ld", "ldo"}} {
		if exAbbrev(name, c[0], c[1]) {
			return true
		}
	}
	return false
}

// exAbbrev reports whether name is full, or an abbreviation of it at
// least as long as min (Vim's :w for :write, :sav for :saveas).
func exAbbrev(name, min, full string) bool {
	return len(name) >= len(min) && strings.HasPrefix(full, name)
}

// skipExRange drops a leading line range: numbers, marks, ., $, %, and
// /pattern/ or ?pattern? searches, joined by , ; + -.
func skipExRange(s string) string {
	for s != "" {
		switch c := s[0]; {
		case c >= '0' && c <= '9', c == '.', c == '$', c == '%', c == ',', c == ';', c == '+', c == '-', c == ' ', c == '\t':
			s = s[1:]
		case c == '\'' && len(s) > 1:
			s = s[2:]
		case c == '/' || c == '?':
			i := 1
			for i < len(s) && s[i] != c {
				if s[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(s) {
				return ""
			}
			s = s[i+1:]
		default:
			return s
		}
	}
	return s
}

// exFileArg is the file an Ex command names: its first word after any
// ++opt, with backslash escapes undone.
func exFileArg(args string) string {
	for _, w := range strings.Fields(args) {
		if !strings.HasPrefix(w, "++") {
			return strings.ReplaceAll(w, "\\ ", " ")
		}
	}
	return ""
}

// edScript reads ed's commands (from standard input): w/W FILE writes it
// (w !cmd runs cmd), ! runs a command, r !cmd and e !cmd run one; text
// after a, i and c up to a lone "." is not read as commands.
func edScript(text string, e *exEffects) {
	input := false
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		if input {
			input = line != "."
			continue
		}
		l := skipExRange(line)
		if l == "" {
			continue
		}
		cmd, args := l[0], strings.TrimSpace(l[1:])
		if cmd == 'w' || cmd == 'W' {
			args = strings.TrimSpace(strings.TrimPrefix(args, "q"))
		}
		switch cmd {
		case 'a', 'i', 'c':
			input = args == ""
		case '!':
			e.runs = append(e.runs, args)
		case 'w', 'W':
			switch {
			case strings.HasPrefix(args, "!"):
				e.runs = append(e.runs, strings.TrimSpace(args[1:]))
			case args == "":
				e.bareW = true
			default:
				e.writes = append(e.writes, args)
			}
		case 'r', 'e', 'E':
			if strings.HasPrefix(args, "!") {
				e.runs = append(e.runs, strings.TrimSpace(args[1:]))
			} else if cmd != 'r' && args != "" {
				e.opened = append(e.opened, args)
			}
		}
	}
}
