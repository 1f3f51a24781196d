import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

import csvsum


class TotalTest(unittest.TestCase):
    def test_sums_numbers(self):
        self.assertEqual(csvsum.total(["1", "2.5"]), 3.5)


if __name__ == "__main__":
    unittest.main()
