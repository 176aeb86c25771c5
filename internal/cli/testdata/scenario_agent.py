#!/usr/bin/env python3
"""The scenario agent: a scripted runner for the CLI scenarios.

It does what the scenario's agent/<phase>/ directory says, so each txtar
script can describe an agent's behaviour as files:

  agent/<phase>/files/...   copied into the worktree (the agent's cwd)
  agent/<phase>/delete      paths (one a line) to delete from the worktree
  agent/<phase>/edit        lines "path<TAB>old<TAB>new": replace old by new
                            (a literal \n in new is a newline)
  agent/investigate/plan.json   copied to $FIXRAIL_PLAN
  agent/fix/result.json         copied to $FIXRAIL_RESULT
  agent/<phase>/stdout, agent/<phase>/stderr   printed on that stream
  agent/<phase>/action      one of: "kill" (SIGKILL itself), "kill-once"
                            (SIGKILL itself before doing anything, the
                            first time only: agent/<phase>.killed marks it),
                            "sleep N",
                            "exit N" (exit with status N),
                            "block" (write agent/started, wait for agent/release),
                            or attacks on the clone at $WORK/repo, each tried
                            and its outcome appended to agent/attacks:
                            "plant-git-config" (core.fsmonitor in .git/config),
                            "plant-hook", "write-info-attributes",
                            "move-base" (commit on main), "steal-environ"
                            (read the parent's /proc environ into agent/stolen),
                            "replace-runs" (.fixrail/runs becomes a file),
                            "block-outbox" (a file where the bundle goes),
                            "plant-dotgit" (a .git link in the worktree),
                            "mkfifo PATH" (a FIFO in the worktree),
                            "symlink PATH TARGET" (a link in the worktree),
                            "link-handoff" (this phase's PLAN.json or
                            result.json, as written, moved aside and
                            replaced by a relative link to it),
                            "read PATH" (read a file, or list a directory,
                            at PATH relative to $WORK; recorded with PATH),
                            "touch PATH" (an empty file; Python escapes
                            such as \x1b in PATH are decoded),
                            "sparse N SIZE DIR" (N sparse files of SIZE
                            bytes, DIR/blobNNN.bin: large, and nothing on disk),
                            "egress-get URL" (a plain-HTTP GET through
                            $HTTP_PROXY; done only on a 200, and the body
                            read whole), "egress-connect HOST:PORT" (a
                            CONNECT through $HTTPS_PROXY; done only on a
                            200; Python escapes in it are decoded), "direct HOST PORT" (a TCP connection
                            around the proxy); in each, @NAME@ is the port
                            the listener NAME wrote to agent/NAME.port

With agent/route ("text<TAB>dir" lines) the first text found in the
prompt picks $WORK/dir as the agent directory: one scenario, several
findings (a batch), each its own agent.

It records the prompt it got in agent/<phase>.prompt and the environment
it saw in agent/<phase>.env for the script to assert on.

A phase's later invocations (a recheck's follow-up fix) take
agent/<phase>.<n>/ instead of agent/<phase>/ when it exists (n = 2, 3, …:
the invocation's number in that phase, counted in agent/<phase>.count),
and also record agent/<phase>.<n>.prompt.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    phase = os.environ.get("FIXRAIL_PHASE", "")
    base = os.path.join(HERE, "agent")
    prompt = sys.stdin.read()
    # Several findings in one scenario (a batch): agent/route holds lines
    # "text<TAB>dir"; the first text the prompt holds makes $WORK/dir the
    # agent directory instead of agent/.
    route = os.path.join(base, "route")
    if os.path.exists(route):
        for line in open(route).read().splitlines():
            if "\t" in line:
                text, rd = line.split("\t", 1)
                if text in prompt:
                    base = os.path.join(HERE, rd)
                    break
    d = os.path.join(base, phase)
    action = os.path.join(d, "action")
    if os.path.exists(action) and open(action).read().split()[:1] == ["kill-once"]:
        marker = os.path.join(base, phase + ".killed")
        if not os.path.exists(marker):
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
    counter = os.path.join(base, phase + ".count")
    n = int(open(counter).read()) + 1 if os.path.exists(counter) else 1
    # Replaced whole, never truncated in place: runs started at once share
    # this file, and one must never read another's half-written count.
    # A unique name, not the pid: sandboxed agents each live in their own
    # PID namespace and share low pids (two at once both wrote .count.17).
    fd, tmp = tempfile.mkstemp(dir=base, prefix=phase + ".count.")
    with os.fdopen(fd, "w") as f:
        f.write(str(n))
    os.replace(tmp, counter)
    with open(os.path.join(base, phase + ".prompt"), "w") as f:
        f.write(prompt)
    if n > 1:
        with open(os.path.join(base, "%s.%d.prompt" % (phase, n)), "w") as f:
            f.write(prompt)
        if os.path.isdir(os.path.join(base, "%s.%d" % (phase, n))):
            d = os.path.join(base, "%s.%d" % (phase, n))
    with open(os.path.join(base, phase + ".env"), "w") as f:
        for k in sorted(os.environ):
            f.write(k + "\n")
    files = os.path.join(d, "files")
    if os.path.isdir(files):
        shutil.copytree(files, ".", dirs_exist_ok=True)
    if os.path.exists(os.path.join(d, "delete")):
        for line in open(os.path.join(d, "delete")).read().split():
            os.remove(line)
    if os.path.exists(os.path.join(d, "edit")):
        for line in open(os.path.join(d, "edit")).read().splitlines():
            if not line.strip():
                continue
            path, old, new = line.split("\t")
            new = new.replace("\\n", "\n")
            src = open(path).read()
            if old not in src:
                sys.exit("scenario agent: %r not found in %s" % (old, path))
            open(path, "w").write(src.replace(old, new))
    if os.path.exists(os.path.join(d, "plan.json")):
        shutil.copy(os.path.join(d, "plan.json"), os.environ["FIXRAIL_PLAN"])
    if os.path.exists(os.path.join(d, "result.json")):
        shutil.copy(os.path.join(d, "result.json"), os.environ["FIXRAIL_RESULT"])
    for name, stream in (("stdout", sys.stdout), ("stderr", sys.stderr)):
        if os.path.exists(os.path.join(d, name)):
            stream.write(open(os.path.join(d, name)).read())
            stream.flush()
    action = os.path.join(d, "action")
    if os.path.exists(action):
        lines = [l.split() for l in open(action).read().splitlines() if l.strip()]
        words = lines[0]
        if words[0] in ATTACKS:
            for words in lines:
                attack(words, base)
        elif words[0] == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        elif words[0] == "kill-once":
            pass
        elif words[0] == "exit":
            sys.exit(int(words[1]))
        elif words[0] == "sparse":
            os.makedirs(words[3], exist_ok=True)
            for i in range(int(words[1])):
                with open(os.path.join(words[3], "blob%03d.bin" % i), "wb") as f:
                    f.truncate(int(words[2]))
        elif words[0] == "sleep":
            time.sleep(float(words[1]))
        elif words[0] == "block":
            open(os.path.join(base, "started"), "w").close()
            deadline = time.time() + 60
            while not os.path.exists(os.path.join(base, "release")) and time.time() < deadline:
                time.sleep(0.05)


REPO = os.path.join(HERE, "repo")


def plant_git_config():
    with open(os.path.join(REPO, ".git", "config"), "a") as f:
        f.write("[core]\n\tfsmonitor = touch " + os.path.join(HERE, "fsmonitor-ran") + "\n")


def plant_hook():
    p = os.path.join(REPO, ".git", "hooks", "post-checkout")
    with open(p, "w") as f:
        f.write("#!/bin/sh\ntouch " + os.path.join(HERE, "hook-ran") + "\n")
    os.chmod(p, 0o755)


def write_info_attributes():
    with open(os.path.join(REPO, ".git", "info", "attributes"), "w") as f:
        f.write("* -diff\n")


def move_base():
    subprocess.run(["git", "-C", REPO, "-c", "user.name=a", "-c", "user.email=a@a",
                    "commit", "-q", "--allow-empty", "-m", "agent"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def steal_environ():
    data = open("/proc/%d/environ" % os.getppid(), "rb").read()
    open(os.path.join(HERE, "agent", "stolen"), "wb").write(data)


def replace_runs():
    runs = os.path.join(REPO, ".fixrail", "runs")
    shutil.rmtree(runs)
    open(runs, "w").write("not a directory")


def block_outbox():
    outbox = os.path.join(REPO, ".fixrail", "outbox")
    os.makedirs(outbox, exist_ok=True)
    for name in os.listdir(os.path.join(REPO, ".fixrail", "locks")):
        open(os.path.join(outbox, name[:-len(".lock")]), "w").write("blocked")


def plant_dotgit():
    open(".git", "w").write("gitdir: " + os.path.join(REPO, ".git") + "\n")


def symlink(path, target):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    os.symlink(target, path)


def symlink_work(path, name):
    """A link at path to $WORK/name, a place on the host the sandbox does not show."""
    symlink(path, os.path.join(HERE, name))


def read(path):
    p = os.path.join(HERE, path)
    if os.path.isdir(p):
        os.listdir(p)
    else:
        open(p, "rb").read()


def touch(path):
    path = path.encode("ascii").decode("unicode_escape")
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    open(path, "w").close()


def mkfifo(path):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    os.mkfifo(path)


def link_handoff():
    phase = os.environ.get("FIXRAIL_PHASE", "")
    path = os.environ["FIXRAIL_PLAN" if phase == "investigate" else "FIXRAIL_RESULT"]
    real = path + ".real"
    os.rename(path, real)
    os.symlink(os.path.basename(real), path)


def ports(s):
    """Replaces each @NAME@ with the port in agent/NAME.port."""
    base = os.path.join(HERE, "agent")
    for name in os.listdir(base):
        if name.endswith(".port"):
            s = s.replace("@%s@" % name[:-5], open(os.path.join(base, name)).read().strip())
    return s


def egress_get(url):
    import urllib.request
    with urllib.request.urlopen(ports(url), timeout=10) as r:
        r.read()


def egress_connect(target):
    import socket
    import urllib.parse
    proxy = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
    target = ports(target).encode("ascii").decode("unicode_escape")
    c = socket.create_connection((proxy.hostname, proxy.port), 10)
    c.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
    status = c.recv(4096).split(b"\r\n")[0]
    c.close()
    if b" 200 " not in status + b" ":
        raise ConnectionRefusedError(status.decode())


def direct(host, port):
    import socket
    socket.create_connection((host, int(ports(port))), 5).close()


ATTACKS = {
    "egress-get": egress_get, "egress-connect": egress_connect, "direct": direct,
    "plant-git-config": plant_git_config, "plant-hook": plant_hook,
    "write-info-attributes": write_info_attributes, "move-base": move_base,
    "steal-environ": steal_environ, "replace-runs": replace_runs,
    "block-outbox": block_outbox, "plant-dotgit": plant_dotgit, "mkfifo": mkfifo,
    "symlink": symlink, "symlink-work": symlink_work, "link-handoff": link_handoff, "read": read, "touch": touch,
}


def attack(words, base):
    try:
        ATTACKS[words[0]](*words[1:])
        outcome = "done"
    except Exception as e:  # the sandbox is meant to make these fail
        outcome = "failed: " + type(e).__name__
    name = " ".join(words) if words[0] == "read" else words[0]
    with open(os.path.join(base, "attacks"), "a") as f:
        f.write("%s %s\n" % (name, outcome))


if __name__ == "__main__":
    main()
