import unittest

from greet import greeting


class GreetingTest(unittest.TestCase):
    def test_greeting(self):
        self.assertEqual(greeting("ada"), "Hello, ada!")


if __name__ == "__main__":
    unittest.main()
