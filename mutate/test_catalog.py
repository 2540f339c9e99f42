#!/usr/bin/env python3
"""The mutation catalog cannot rot silently (ctest mutate_catalog, label unit): it parses, it has
at least 30 entries, every entry's original text occurs exactly once in the current tree, every
equivalent mutant carries its argument; and scripts/mutate refuses a bad catalog with exit 2,
naming the entry. No build, no suite run: scripts/mutate --check and --list only."""

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTATE = [sys.executable, str(ROOT / "scripts" / "mutate")]


def mutate(*args):
    return subprocess.run(MUTATE + list(args), capture_output=True, text=True, cwd=ROOT)


class Catalog(unittest.TestCase):
    def test_every_entry_applies_exactly_once_to_the_tree(self):
        run = mutate("--check")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("each applies exactly once", run.stdout)

    def test_it_lists_at_least_thirty_bugs_across_scripts_engine_and_checker(self):
        run = mutate("--list")
        self.assertEqual(run.returncode, 0, run.stderr)
        rows = [line.split("  ") for line in run.stdout.splitlines()]
        self.assertGreaterEqual(len(rows), 30)
        files = [row[1] for row in rows]
        for folder in ("adapters/lua/", "core/src/", "properties/src/checker_"):
            self.assertTrue(any(f.startswith(folder) for f in files), folder)

    def test_an_equivalent_mutant_carries_its_argument(self):
        text = (ROOT / "mutate" / "catalog.txt").read_text()
        for line in text.splitlines():
            if line.startswith("equivalent:"):
                self.assertGreater(len(line.split(":", 1)[1].split()), 8, line)


class BadCatalog(unittest.TestCase):
    def refused(self, text, *needles):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write(text)
        try:
            run = mutate("--catalog", f.name, "--check")
        finally:
            Path(f.name).unlink()
        self.assertEqual(run.returncode, 2, run.stdout + run.stderr)
        for needle in needles:
            self.assertIn(needle, run.stderr)

    def test_text_that_does_not_occur_is_named(self):
        self.refused("[gone]\nfile: core/src/heartbeat.cpp\nwhat: x\n"
                     "original: no such text in heartbeat\nreplacement: y\n",
                     "'gone'", "occurs 0 times", "core/src/heartbeat.cpp")

    def test_text_that_occurs_twice_is_named(self):
        self.refused("[twice]\nfile: core/src/heartbeat.cpp\nwhat: x\n"
                     "original: co_await\nreplacement: y\n", "'twice'", "must occur exactly once")

    def test_a_missing_file_is_named(self):
        self.refused("[nofile]\nfile: core/src/nosuch.cpp\nwhat: x\noriginal: a\nreplacement: b\n",
                     "'nofile'", "core/src/nosuch.cpp")

    def test_an_unknown_key_a_repeated_id_and_a_missing_field_are_refused(self):
        self.refused("[a]\nfile: core/src/heartbeat.cpp\nwhy: x\n", "unknown line 'why: x'")
        entry = "file: core/src/heartbeat.cpp\nwhat: x\noriginal: Heartbeat::loop\nreplacement: y\n"
        self.refused(f"[a]\n{entry}[a]\n{entry}", "'a' is used twice")
        self.refused("[a]\nfile: core/src/heartbeat.cpp\noriginal: a\nreplacement: b\n",
                     "'a' has no 'what'")

    def test_an_unknown_only_is_refused(self):
        run = mutate("--only", "no-such-mutant", "--list")
        self.assertEqual(run.returncode, 2)
        self.assertIn("no-such-mutant", run.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
