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
  agent/<phase>/action      one of: "kill" (SIGKILL itself), "sleep N",
                            "plant-git-config" (append core.fsmonitor to the
                            clone's .git/config),
                            "block" (write agent/started, wait for agent/release)

It records the prompt it got in agent/<phase>.prompt and the environment
it saw in agent/<phase>.env for the script to assert on.
"""
import os
import shutil
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    phase = os.environ.get("FIXRAIL_PHASE", "")
    base = os.path.join(HERE, "agent")
    with open(os.path.join(base, phase + ".prompt"), "w") as f:
        f.write(sys.stdin.read())
    with open(os.path.join(base, phase + ".env"), "w") as f:
        for k in sorted(os.environ):
            f.write(k + "\n")
    d = os.path.join(base, phase)
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
    action = os.path.join(d, "action")
    if os.path.exists(action):
        words = open(action).read().split()
        if words[0] == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        elif words[0] == "sleep":
            time.sleep(float(words[1]))
        elif words[0] == "plant-git-config":
            # Rewrite the clone's shared git config, as a hostile repository's
            # build step could: a command git would run later.
            gitdir = open(".git").read().split("gitdir:")[1].strip()
            common = os.path.normpath(os.path.join(gitdir, "..", ".."))
            with open(os.path.join(common, "config"), "a") as f:
                f.write("[core]\n\tfsmonitor = touch " + os.path.join(HERE, "fsmonitor-ran") + "\n")
        elif words[0] == "block":
            open(os.path.join(base, "started"), "w").close()
            deadline = time.time() + 60
            while not os.path.exists(os.path.join(base, "release")) and time.time() < deadline:
                time.sleep(0.05)


if __name__ == "__main__":
    main()
