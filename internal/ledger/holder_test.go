package ledger

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
)

func TestHolderAlive(t *testing.T) {
	me := selfHolder()
	if me.boot == "" || me.start == "" {
		t.Fatalf("no boot id or start time on this machine: %+v", me)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	gone := me
	gone.pid = cmd.Process.Pid
	reused := me
	reused.start = me.start + "0" // the pid of a process that started at another time
	for _, c := range []struct {
		name   string
		holder string
		alive  bool
	}{
		{"this process", me.String(), true},
		{"an exited process", gone.String(), false},
		{"a reused pid", reused.String(), false},
		{"another host", "elsewhere|" + me.boot + "|" + strconv.Itoa(cmd.Process.Pid) + "|1", true},
		{"another boot", me.host + "|other-boot|" + strconv.Itoa(cmd.Process.Pid) + "|1", true},
		{"garbage is never provably dead", "not a holder", true},
		{"pid zero", me.host + "|" + me.boot + "|0|1", true},
	} {
		if got := me.alive(c.holder); got != c.alive {
			t.Errorf("%s (%q): alive %v, want %v", c.name, c.holder, got, c.alive)
		}
	}
}

// FuzzHolder: a holder string comes from a shared table anyone with access
// to the ledger can write. Parsing never panics, accepts no pid below 1,
// and never proves a holder on another machine dead.
func FuzzHolder(f *testing.F) {
	f.Add(selfHolder().String())
	f.Add("h|b|1|2")
	f.Add("||||")
	f.Fuzz(func(t *testing.T, s string) {
		h, ok := parseHolder(s)
		if ok && h.pid <= 0 {
			t.Fatalf("accepted %q as %+v", s, h)
		}
		me := holder{host: "fuzz-host-" + strconv.Itoa(os.Getpid()), boot: "fuzz-boot", pid: 1, start: "1"}
		if ok && (h.host != me.host || h.boot != me.boot) && !me.alive(s) {
			t.Fatalf("a holder on another machine (%q) was declared dead", s)
		}
	})
}
