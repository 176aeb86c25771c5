import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from textfmt.names import display_name, initials  # noqa: E402


class DisplayNameTest(unittest.TestCase):
    def test_full_name(self):
        user = {"first": "Ada", "middle": "King", "last": "Lovelace"}
        self.assertEqual(display_name(user), "Ada King Lovelace")

    def test_strips_spaces(self):
        user = {"first": " Grace ", "middle": "", "last": "Hopper "}
        self.assertEqual(display_name(user), "Grace Hopper")

    def test_initials(self):
        user = {"first": "Ada", "middle": "King", "last": "Lovelace"}
        self.assertEqual(initials(user), "AKL")


if __name__ == "__main__":
    unittest.main()
