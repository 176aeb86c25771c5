package policy

import (
	"path/filepath"
	"strings"

	"github.com/fixrail/fixrail/internal/fsname"
)

// opener: open (macOS), xdg-open, gio open, the browser launchers and their
// kin hand a URL or a file to whatever the desktop runs for it, outside the
// agent's process tree and so outside this hook. Two of those are judged
// here. A browser fetches the URL: one built from a command's output
// carries that output to its host (egress-other), as a curl URL does. And
// on a Mac, Terminal runs a .command or .tool file with the user's shell,
// as it runs any file open -a gives a terminal: the script is judged as
// if a shell ran it (a .terminal file names its command inside a property
// list, not read here: unresolvable). Anything else an opener starts (an
// application, a document in its editor) is what running a program is.
func (a *analyzer) opener(c *cmd) {
	args := c.args
	if c.name == "gio" {
		if len(args) == 0 || args[0].s != "open" {
			return
		}
		args = args[1:]
	}
	var urls, files []field
	// app: which application open gives the files to: "" (each file's
	// default: Terminal for .command and .tool), "terminal" or "other".
	app := ""
	for i := 0; i < len(args); i++ {
		f := args[i]
		if c.name == "open" {
			switch f.s {
			case "-a", "-b":
				if i+1 < len(args) {
					i++
					if app != "terminal" {
						app = "other"
						if args[i].dyn || terminalApp(args[i].s) {
							app = "terminal"
						}
					}
				}
				continue
			case "-u":
				if i+1 < len(args) {
					i++
					urls = append(urls, args[i])
				}
				continue
			case "-s", "--env", "--stdin", "--stdout", "--stderr", "-i", "-o", "--arch":
				i++ // takes a value
				continue
			case "--args":
				i = len(args) // what follows is the application's
				continue
			case "-e", "-t", "-f":
				if app == "" {
					app = "other" // a text editor opens the files
				}
			}
		}
		switch {
		case f.dyn && f.out:
			urls = append(urls, f) // a URL or a path built from a command's output
		case strings.HasPrefix(f.s, "-") && !f.dyn:
		case strings.Contains(f.s, "://") || f.dyn:
			urls = append(urls, f)
		default:
			files = append(files, f)
		}
	}
	a.carried(urls, urls, c.name)
	if c.name != "open" {
		return
	}
	for _, f := range files {
		switch ext := filepath.Ext(fsname.Fold(f.s)); {
		case app == "other":
		case ext == ".terminal" && app == "":
			a.all("open " + f.s + " runs the command a Terminal settings file names, which the hook does not read")
		case app == "terminal" || ext == ".command" || ext == ".tool":
			a.scriptFile(f, c.st, c.depth, "open (Terminal runs it)", false)
		}
	}
	for _, f := range urls {
		if f.dyn && app == "terminal" {
			a.all("open gives a terminal a file named only at run time")
			break
		}
	}
}

// terminalApp reports whether open -a or -b names a terminal emulator: it
// runs the file it is given as a shell script.
func terminalApp(name string) bool {
	n := fsname.Fold(strings.TrimSuffix(filepath.Base(strings.TrimRight(name, "/")), ".app"))
	for _, t := range []string{"term", "iterm", "ghostty", "alacritty", "kitty", "wezterm", "warp", "hyper", "tabby", "rio"} {
		if strings.Contains(n, t) {
			return true
		}
	}
	return false
}
