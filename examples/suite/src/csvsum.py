"""csvsum: print the sum of the numbers in a file, one number per line."""

import sys


def total(lines):
    result = 0.0
    for line in lines:
        result += float(line)
    return result


def main(argv):
    with open(argv[1]) as f:
        print(total(f.read().splitlines()))


if __name__ == "__main__":
    main(sys.argv)
