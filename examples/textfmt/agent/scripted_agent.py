#!/usr/bin/env python3
"""A scripted stand-in for a coding agent, for `fixrail demo`.

It is NOT a model: it always writes the same test and the same fix for the
textfmt demo's bug report, so fixrail's rails can be watched end to end
without credentials or network. It follows the runner contract exactly as a
real agent adapter would: the prompt arrives on stdin, the working directory
is the finding's worktree, and FIXRAIL_PHASE, FIXRAIL_PLAN and FIXRAIL_RESULT
say what to do and where to hand results back.
"""
import json
import os
import sys

TEST_PATH = "tests/test_issue_42.py"
TEST = '''import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from textfmt.names import display_name  # noqa: E402


class MissingMiddleNameTest(unittest.TestCase):
    def test_no_middle_name(self):
        self.assertEqual(display_name({"first": "Alan", "last": "Turing"}), "Alan Turing")


if __name__ == "__main__":
    unittest.main()
'''
BUGGY = 'names = [user.get("first").strip(), user.get("middle").strip(), user.get("last").strip()]'
FIXED = 'names = [(user.get(key) or "").strip() for key in ("first", "middle", "last")]'


def main():
    prompt = sys.stdin.read()
    if "<untrusted-" not in prompt:
        sys.exit("scripted agent: the prompt carries no fence; refusing")
    phase = os.environ["FIXRAIL_PHASE"]
    if phase == "investigate":
        with open(TEST_PATH, "w") as f:
            f.write(TEST)
        plan = {
            "summary": "display_name calls .strip() on a missing middle name (None).",
            "files": ["src/textfmt/names.py"],
            "test": {
                "path": TEST_PATH,
                "name": "test_no_middle_name",
                "symptom": "AttributeError: 'NoneType' object has no attribute 'strip'",
            },
        }
        with open(os.environ["FIXRAIL_PLAN"], "w") as f:
            json.dump(plan, f)
    elif phase == "fix":
        path = "src/textfmt/names.py"
        with open(path) as f:
            src = f.read()
        with open(path, "w") as f:
            f.write(src.replace(BUGGY, FIXED))
        result = {"summary": "Treat a missing name part as empty.", "files_changed": [path]}
        with open(os.environ["FIXRAIL_RESULT"], "w") as f:
            json.dump(result, f)
    else:
        sys.exit("scripted agent: unknown phase " + phase)


if __name__ == "__main__":
    main()
