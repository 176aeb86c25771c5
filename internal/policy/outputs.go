package policy

// Commands that write a file named by an option or a later operand, which
// reading them as filters would miss.

// sortCmd: sort -o FILE writes FILE; --compress-program runs a program.
func (a *analyzer) sortCmd(c *cmd) {
	p := parseOpts(c.args, optSpec{short: "kotTS", long: []string{"key", "output", "field-separator", "temporary-directory",
		"buffer-size", "parallel", "batch-size", "compress-program", "files0-from", "random-source", "sort"}})
	if o, ok := p.value("-o", "--output"); ok {
		a.writePath(o, c.st, "sort -o")
	}
	if prog, ok := p.value("--compress-program"); ok {
		a.runsText(prog, c, "sort --compress-program")
	}
}

// secondOperandOut: uniq [IN [OUT]] writes its second operand.
func secondOperandOut(sp optSpec) func(a *analyzer, c *cmd) {
	return func(a *analyzer, c *cmd) {
		p := parseOpts(c.args, sp)
		if len(p.operands) > 1 && p.operands[1].s != "-" {
			a.writePath(p.operands[1], c.st, c.name)
		}
	}
}

// xxd [IN [OUT]] writes its second operand. Its long options take one
// dash (-cols 16), read here as their letters.
func (a *analyzer) xxd(c *cmd) {
	long := map[string]string{"-cols": "-c", "-groupsize": "-g", "-len": "-l", "-seek": "-s", "-name": "-n", "-offset": "-o",
		"-bits": "-b", "-capitalize": "-C", "-EBCDIC": "-E", "-include": "-i", "-postscript": "-p", "-plain": "-p", "-ps": "-p", "-revert": "-r", "-uppercase": "-u"}
	args := make([]field, len(c.args))
	for i, f := range c.args {
		if l, ok := long[f.s]; ok {
			f = word(l)
		}
		args[i] = f
	}
	p := parseOpts(args, optSpec{short: "cglosn"})
	if len(p.operands) > 1 && p.operands[1].s != "-" {
		a.writePath(p.operands[1], c.st, "xxd")
	}
}

// opensslOut: whichever openssl command it is, -out, -keyout and their
// kin name files it writes.
func (a *analyzer) opensslOut(c *cmd) {
	for i, f := range c.args {
		switch f.s {
		case "-out", "-keyout", "-certout", "-sigout", "-rand_out", "-writerand", "-reqout", "-rspout":
			if i+1 < len(c.args) && c.args[i+1].s != "-" {
				a.writePath(c.args[i+1], c.st, "openssl "+f.s)
			}
		}
	}
}

// sshKeygenWrites: generating a key (no mode option) writes -f FILE and
// FILE.pub.
func (a *analyzer) sshKeygenWrites(p parsed, st *state) {
	if p.has("-l", "-y", "-e", "-i", "-F", "-R", "-H", "-Y", "-L", "-k", "-Q", "-B", "-D", "-K", "-M", "-r", "-s", "-A", "-p", "-c") {
		return
	}
	if f, ok := p.value("-f"); ok {
		a.writePath(f, st, "ssh-keygen -f")
		a.writePath(field{s: f.s + ".pub", dyn: f.dyn}, st, "ssh-keygen -f")
	}
}

// edValued are the options that take a value, for ed and for the vi
// family (whose -s is a script, where ed's -s is silence).
func edValued(name string) map[string]bool {
	switch name {
	case "ed", "red":
		return set("-p", "--prompt")
	case "emacs", "nano", "pico", "micro":
		return set("-l", "-f", "--load", "--funcall", "--insert", "--eval", "-L", "-T", "-t")
	}
	return set("-c", "-S", "-u", "-i", "-s", "-w", "-W", "-T", "-t", "-q", "--cmd", "-l", "-L")
}
