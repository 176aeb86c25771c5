package policy

import (
	"os"
	"slices"
	"strings"
)

// A container's own command line runs in the container and is not judged
// here, but what it is given of this machine is: a bind mount hands it a
// directory to read and, unless read-only, to write; `docker cp` writes
// what the container holds into a local path. So a writable mount of a
// protected zone (~/.claude, $FIXRAIL_HOME, a shell's start-up files, ~/.ssh)
// or of a directory that holds one (the home directory), or of a directory
// protected names sit in (.claude, .git), is judged as a write to it, and
// any mount as a read of what lies below. A mount of the project's own
// directory is not: building and testing in a container is routine, and a
// program run in the project is not judged by what it might write either.

// containerMounts judges the bind mounts of docker/podman run options (up
// to the image).
func (a *analyzer) containerMounts(c *cmd, rest []field) {
	for k := 0; k < len(rest); k++ {
		f := rest[k]
		if f.dyn || f.s == "--" || !strings.HasPrefix(f.s, "-") {
			return // the image (or a word only known at run time)
		}
		name, val, eq := strings.Cut(f.s, "=")
		vf := field{s: val, dyn: f.dyn}
		if !eq && !containerFlag(name) {
			if !strings.HasPrefix(name, "--") && len(name) > 2 {
				name, vf = name[:2], field{s: name[2:], dyn: f.dyn}
			} else if k+1 < len(rest) {
				k++
				vf = rest[k]
			}
		}
		switch name {
		case "-v", "--volume":
			// SRC:DST[:OPTS]; a SRC that is not a path names a volume.
			parts := strings.Split(vf.s, ":")
			switch {
			case len(parts) < 2 && vf.dyn:
				// Only known at run time: it may be SRC:DST.
				a.mounted(field{s: vf.s, dyn: true}, false, c)
				continue
			case len(parts) < 2 || !(strings.HasPrefix(parts[0], "/") || strings.HasPrefix(parts[0], ".") || strings.HasPrefix(parts[0], dynMark)):
				continue
			}
			ro := len(parts) > 2 && slices.ContainsFunc(strings.Split(parts[2], ","), func(o string) bool { return o == "ro" || o == "readonly" })
			a.mounted(field{s: parts[0], dyn: vf.dyn && strings.Contains(parts[0], dynMark)}, ro, c)
		case "--mount":
			src, bind, ro := "", false, false
			for kv := range strings.SplitSeq(vf.s, ",") {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "type":
					bind = v == "bind"
				case "source", "src":
					src = v
				case "readonly", "ro":
					ro = v == "" || v == "true" || v == "1"
				}
			}
			if bind && src != "" {
				a.mounted(field{s: src, dyn: vf.dyn && strings.Contains(src, dynMark)}, ro, c)
			}
		}
	}
}

// mounted judges one bind mount's source.
func (a *analyzer) mounted(src field, ro bool, c *cmd) {
	how := c.name + " run, mounting " + src.String()
	a.readPath(src, c.st, how, true)
	if ro || c.st.remote {
		return
	}
	if src.dyn {
		a.add(SelfMod, true, "%s, a directory only known at run time, which the container can write", how)
		a.add(ScopeEscalation, true, "%s, a directory only known at run time, which the container can write", how)
		return
	}
	p, ok := cleanAbs(c.st.cwd, a.expandTilde(src.s))
	if !ok {
		return
	}
	a.zoneList()
	for _, cand := range a.candidates(p) {
		comps := splitPath(cand)
		reached := map[Rule][]string{}
		reach := func(r Rule, what string) {
			if !slices.Contains(reached[r], what) {
				reached[r] = append(reached[r], what)
			}
		}
		for _, z := range a.zoneList() {
			if z.inside(comps) || z.containedBy(comps) {
				reach(z.rule, z.what)
			}
		}
		for _, n := range a.names {
			if n.match(comps) || n.holdsPrefix(comps) {
				reach(n.rule, n.what)
			}
		}
		for _, r := range Rules {
			if whats := reached[r]; len(whats) > 0 {
				a.add(r, false, "%s lets the container write %s (%s)", how, cand, strings.Join(whats, ", "))
			}
		}
	}
}

// containerCopy judges `docker cp SRC DEST` (podman's; kubectl's, whose
// pods may be namespaced, ns/pod:PATH): a local DEST is written with what
// the container holds, unknown here — a file at DEST, or a tree into it
// when it is a directory; a local SRC is read.
func (a *analyzer) containerCopy(c *cmd, rest []field, namespaced bool) {
	var ops []field
	for _, f := range rest {
		if !f.optLike() || f.dyn {
			ops = append(ops, f)
		}
	}
	if len(ops) != 2 {
		return
	}
	src, dest := ops[0], ops[1]
	how := c.name + " cp"
	if !inContainer(src, namespaced) && src.s != "-" {
		a.readPath(src, c.st, how, true)
	}
	if inContainer(dest, namespaced) || dest.s == "-" {
		return
	}
	a.writeTree(dest, c.st, how, false)
	if dest.dyn {
		return
	}
	if p, ok := cleanAbs(c.st.cwd, a.expandTilde(dest.s)); ok && !c.st.remote {
		r := a.resolve(p)
		if exposed, what := a.exposedDir(r); exposed && isDir(r) {
			for _, r := range []Rule{SelfMod, ScopeEscalation} {
				a.add(r, true, "%s copies a tree the container holds into %s (%s), its contents unknown here", how, p, what)
			}
		} else if isDir(r) && (a.nestedRepoDir(p) || a.nestedRepoDir(r)) {
			a.add(ScopeEscalation, true, "%s copies a tree the container holds into %s, %s; its contents are unknown here", how, p, nestedWhere)
		}
	}
}

// inContainer reports whether a cp operand names a path in a container
// (NAME:PATH, or NS/POD:PATH for kubectl); a local path holding a colon is
// written ./a:b or /a:b.
func inContainer(f field, namespaced bool) bool {
	i := strings.IndexByte(f.s, ':')
	if i <= 0 || strings.HasPrefix(f.s, "/") || strings.HasPrefix(f.s, ".") {
		return false
	}
	return namespaced || !strings.Contains(f.s[:i], "/")
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
