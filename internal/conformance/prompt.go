package conformance

import (
	"strings"

	"github.com/rhysd/actionlint"
)

// promptPart is a piece of text an agent reads as its prompt: an action's
// prompt input, or the run: script that invokes a CLI agent.
type promptPart struct {
	s      *actionlint.String
	sc     *scalar
	fences []fence
	shell  bool
}

func (w *Workflow) promptParts(a *agent) []promptPart {
	if a.parts == nil {
		a.parts = w.promptParts0(a)
		if a.parts == nil {
			a.parts = []promptPart{}
		}
	}
	return a.parts
}

func (w *Workflow) promptParts0(a *agent) []promptPart {
	if a.st.run != nil {
		if a.st.run.Run == nil {
			return nil
		}
		sc := w.exprsOf(a.st.run.Run)
		return []promptPart{{s: a.st.run.Run, sc: sc, fences: fences(a.st.run.Run.Value, sc, true), shell: true}}
	}
	var out []promptPart
	for _, in := range a.promptInputs() {
		sc := w.exprsOf(in.Value)
		out = append(out, promptPart{s: in.Value, sc: sc, fences: fences(in.Value.Value, sc, false)})
	}
	return out
}

func (p promptPart) fenced(off int) bool {
	for _, f := range p.fences {
		if f.contains(off) {
			return true
		}
	}
	return false
}

// trustedText is the prompt with fence bodies and ${{ }} removed: what the
// workflow author wrote, as opposed to what the event supplies.
func (p promptPart) trustedText() string {
	v := p.s.Value
	var b strings.Builder
	last := 0
	for _, f := range p.fences {
		b.WriteString(v[last:f.bodyOff])
		last = f.closeOff
	}
	b.WriteString(v[last:])
	t := b.String()
	for {
		i := strings.Index(t, "${{")
		if i < 0 {
			return t
		}
		j := strings.Index(t[i:], "}}")
		if j < 0 {
			return t[:i]
		}
		t = t[:i] + " " + t[i+j+2:]
	}
}

// mayWrite reports whether the agent's job can change the repository:
// its token may write contents (an unset permissions block takes the
// repository default, which may be write). pull-requests: write alone
// comments and reviews; it cannot push a fix.
func (w *Workflow) mayWrite(j *job) bool {
	perms := j.al.Permissions
	if perms == nil {
		perms = w.wf.Permissions
	}
	if perms == nil {
		return true
	}
	if perms.All != nil {
		return perms.All.Value == "write-all"
	}
	s := perms.Scopes["contents"]
	return s != nil && s.Value != nil && s.Value.Value == "write"
}
