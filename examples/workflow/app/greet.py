"""greet prints a greeting for a name."""

import sys


def greeting(name):
    return f"Hello, {name}!"


def main(argv):
    if len(argv) != 1:
        print("usage: greet NAME", file=sys.stderr)
        return 2
    print(greeting(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
