package policy

import (
	"path/filepath"
	"testing"
)

// TestContainerMounts: what a container is given of this machine is
// judged — a writable bind mount of a protected zone, of a directory that
// holds one, or of a directory protected names sit in is a write to it;
// docker cp and kubectl cp write what the container holds into a local
// path — and a mount of the project itself is not.
func TestContainerMounts(t *testing.T) {
	env, home, repo, _ := fsEnv(t)
	write(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(repo, "vendor", "README"), "")
	claude := filepath.Join(home, ".claude")
	for _, c := range []tc{
		{id: "claude", in: "docker run -v ~/.claude:/c alpine sh -c 'echo > /c/settings.json'", want: "self-mod"},
		{id: "claude-home-var", in: "docker run -v $HOME/.claude:/c alpine true", want: "self-mod"},
		{id: "claude-ro", in: "docker run -v ~/.claude:/c:ro alpine cat /c/settings.json", want: ""},
		{id: "project-pwd", in: `docker run --rm -v "$(pwd)":/app -w /app golang go test ./...`, want: ""},
		{id: "project-dot", in: "docker run --rm -v .:/app golang go test ./...", want: ""},
		{id: "project-claude", in: `docker run --rm -v "$(pwd)/.claude":/c alpine true`, want: "self-mod"},
		{id: "project-git", in: "docker run --rm -v ./.git:/g alpine true", want: "scope-escalation"},
		{id: "home", in: "docker run -v ~/:/h alpine true", want: "self-mod scope-escalation"},
		// bash expands ~:/h to HOME:/h; the expansion here reads ~: as a
		// user's name, unknown, so the source is only known at run time.
		{id: "home-tilde-colon", in: "docker run -v ~:/h alpine true", want: "self-mod? scope-escalation?"},
		{id: "ssh", in: "docker run -v ~/.ssh:/root/.ssh alpine true", want: "scope-escalation"},
		{id: "mount-bind", in: "docker run --mount type=bind,source=" + claude + ",target=/c alpine true", want: "self-mod"},
		{id: "mount-bind-ro", in: "docker run --mount type=bind,source=" + claude + ",target=/c,readonly alpine true", want: ""},
		{id: "mount-volume", in: "docker run --mount type=volume,source=data,target=/c alpine true", want: ""},
		{id: "named-volume", in: "docker run -v data:/data alpine true", want: ""},
		{id: "attached", in: "docker run -v" + claude + ":/c alpine true", want: "self-mod"},
		{id: "container-run", in: "docker container run -v ~/.claude:/c alpine true", want: "self-mod"},
		{id: "container-run-privileged", in: "docker container run --privileged alpine true", want: "scope-escalation"},
		{id: "podman", in: "podman run -v ~/.bashrc:/b alpine true", want: "scope-escalation"},
		{id: "runtime-source", in: `docker run -v "$X":/c alpine true`, want: "self-mod? scope-escalation?"},
		{id: "cp-file", in: "docker cp c1:/evil ~/.claude/settings.json", want: "self-mod"},
		{id: "cp-container-cp", in: "docker container cp c1:/evil ~/.bashrc", want: "scope-escalation"},
		// A tree copied into a directory below the project may make a
		// nested repository there (its .git/config).
		{id: "cp-subdir", in: "docker cp c1:/app vendor", want: "scope-escalation?"},
		{id: "cp-local", in: "docker cp c1:/x ./out.txt", want: ""},
		{id: "cp-out", in: "docker cp ./out.txt c1:/x", want: ""},
		{id: "kubectl-cp", in: "kubectl cp ns/pod:/evil ~/.claude/settings.json", want: "self-mod"},
		{id: "kubectl-cp-local", in: "kubectl cp -c app ns/pod:/x ./local", want: ""},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}

// TestPwdSubstitution: $(pwd) is the working directory the analysis
// follows, so a path built on it is judged where it points.
func TestPwdSubstitution(t *testing.T) {
	env, _, repo, _ := fsEnv(t)
	for _, c := range []tc{
		{id: "pwd", in: `echo '{}' > "$(pwd)/.claude/settings.json"`, want: "self-mod"},
		{id: "pwd-P", in: "echo x > `pwd -P`/.claude/settings.json", want: "self-mod"},
		{id: "after-cd", in: `mkdir -p sub && cd sub && echo x > "$(pwd)/../.claude/settings.json"`, want: "self-mod"},
		{id: "plain", in: `echo x > "$(pwd)/notes.txt"`, want: ""},
		{id: "other-substitution", in: `echo x > "$(pwd foo)/notes.txt"`, want: "self-mod? scope-escalation?"},
	} {
		c.cwd = repo
		runCase(t, c, env)
	}
}
