package policy

import (
	"path/filepath"
	"testing"
)

func TestProcPath(t *testing.T) {
	for _, c := range []struct {
		in, want string
		known    bool
	}{
		{"/proc/self/cwd/.claude/settings.json", "/w/.claude/settings.json", true},
		{"/proc/thread-self/cwd", "/w", true},
		{"/proc/self/root/etc/passwd", "/etc/passwd", true},
		{"/proc/1/root/home/u/.bashrc", "/home/u/.bashrc", true},
		{"/proc/self/task/7/root/x", "/x", true},
		{"/proc/self/task/7/cwd/x", "/w/x", true},
		{"/proc/42/cwd/x", "", false},
		{"/proc/self/fd/3/x", "", false},
		{"/dev/fd/3/x", "/dev/fd/3/x", false},
		{"/proc/self/fd/1", "/proc/self/fd/1", true},
		{"/dev/fd/1", "/dev/fd/1", true},
		{"/proc/self/status", "/proc/self/status", true},
		{"/home/u/x", "/home/u/x", true},
	} {
		got, known := procPath(c.in, "/w")
		if known != c.known || (known && got != c.want) {
			t.Errorf("procPath(%q) = %q, %v; want %q, %v", c.in, got, known, c.want, c.known)
		}
	}
}

// TestProcPaths: a write or read through /proc's links is judged at the
// file it reaches.
func TestProcPaths(t *testing.T) {
	env, home, repo, _ := fsEnv(t)
	env.FixrailHome = filepath.Join(home, ".config", "fixrail")
	write(t, filepath.Join(env.FixrailHome, "keys", "owner.pub"), "ssh-ed25519 AAAA x\n")
	for _, c := range []tc{
		{id: "cwd", in: "echo '{}' > /proc/self/cwd/.claude/settings.json", want: "self-mod"},
		{id: "cwd-after-cd", in: "mkdir -p d && cd d && cp x /proc/thread-self/cwd/.claude/settings.json", want: "self-mod"},
		{id: "root", in: "echo x >> /proc/self/root" + home + "/.bashrc", want: "scope-escalation"},
		{id: "task-root", in: "cp x /proc/self/task/1/root" + home + "/.claude/settings.json", want: "self-mod"},
		{id: "other-cwd", in: "echo x > /proc/1/cwd/notes", want: "self-mod? scope-escalation?"},
		{id: "fd-dir", in: "echo x > /dev/fd/3/settings.json", want: "self-mod? scope-escalation?"},
		{id: "read-keys", in: "cat /proc/self/root" + env.FixrailHome + "/keys/owner.pub", want: "self-mod"},
		{id: "plain-cwd", in: "echo x > /proc/self/cwd/notes.txt", want: ""},
		{id: "fd", in: "echo x > /proc/self/fd/2", want: ""},
		{id: "status", in: "cat /proc/self/status", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
	tool := tc{id: "write-tool", tool: "Write", in: `{"file_path":"/proc/self/cwd/.claude/settings.json","content":"{}"}`, want: "self-mod", cwd: repo}
	runCase(t, tool, env)
}
