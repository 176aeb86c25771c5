#!/usr/bin/env python3
"""A scripted stand-in for a coding agent, for `fixrail demo --sast` and
`fixrail demo --secret`.

It is NOT a model: it always makes the same edit for the demo's two
findings, so the scanner-backed oracles can be watched end to end without
credentials or network. It follows the runner contract: the prompt on
stdin, the finding's worktree as its directory, FIXRAIL_PHASE and
FIXRAIL_RESULT saying what to do and where to hand back. The harness plans
these types itself, so only the fix phase is ever asked.
"""
import json
import os
import re
import sys


def main():
    prompt = sys.stdin.read()
    if "<untrusted-" not in prompt:
        sys.exit("scripted agent: the prompt carries no fence; refusing")
    if os.environ.get("FIXRAIL_PHASE") != "fix":
        sys.exit("scripted agent: only the fix phase is scripted")
    if "rule: G201" in prompt:
        path = "db/users.go"
        src = open(path).read()
        src = src.replace("""q := fmt.Sprintf("SELECT id, email FROM users WHERE name = '%s'", name)""",
                          'q := "SELECT id, email FROM users WHERE name = $1"')
        src = src.replace("rows, err := s.DB.Query(q)", "rows, err := s.DB.Query(q, name)")
        summary = "parameterised the query"
    else:
        path = "shop/client.go"
        src = open(path).read()
        src = re.sub(r'const apiKey = "[^"]*"', 'var apiKey = os.Getenv("SHOP_API_KEY")', src)
        src = src.replace("package shop\n", 'package shop\n\nimport "os"\n', 1)
        summary = "read the key from the environment"
    open(path, "w").write(src)
    json.dump({"summary": summary, "files_changed": [path]}, open(os.environ["FIXRAIL_RESULT"], "w"))


if __name__ == "__main__":
    main()
