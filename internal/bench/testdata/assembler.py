#!/usr/bin/env python3
"""The assembler of design note 002 ("skill-aware orchestration"), written
from the note so that `baton bench` can compare baton's assembler with it:

- extract_sections() matches headers case-insensitively and captures content
  through the next equal-or-higher-level header;
- extract_lines() uses 1-indexed inclusive ranges;
- extract_context_subset() tries sections first, then line ranges, and falls
  back to the full context.

Usage: assembler.py FILE [--section TITLE]... [--lines A-B]...
The slice is written to standard output.
"""
import re
import sys

HEADER = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def extract_sections(context, sections):
    """Each header whose text equals a wanted title, ignoring case, with its
    content up to the next header of the same or a higher level."""
    wanted = {s.strip().lower() for s in sections}
    lines = context.split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = HEADER.match(lines[i])
        if m and m.group(2).strip().lower() in wanted:
            level = len(m.group(1))
            j = i + 1
            while j < len(lines):
                n = HEADER.match(lines[j])
                if n and len(n.group(1)) <= level:
                    break
                j += 1
            out.append("\n".join(lines[i:j]))
            i = j
        else:
            i += 1
    return "\n\n".join(out)


def extract_lines(context, line_ranges):
    """Lines start..end of each range, 1-indexed and inclusive."""
    lines = context.split("\n")
    out = []
    for start, end in line_ranges:
        part = lines[max(start, 1) - 1:end]
        if part:
            out.append("\n".join(part))
    return "\n\n".join(out)


def extract_context_subset(context, pointers):
    """Sections first, then line ranges; the full context when neither
    selects anything."""
    if pointers.get("sections"):
        text = extract_sections(context, pointers["sections"])
        if text:
            return text
    if pointers.get("line_ranges"):
        text = extract_lines(context, pointers["line_ranges"])
        if text:
            return text
    return context


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    path, args = argv[1], argv[2:]
    pointers = {"sections": [], "line_ranges": []}
    i = 0
    while i < len(args):
        if args[i] == "--section" and i + 1 < len(args):
            pointers["sections"].append(args[i + 1])
        elif args[i] == "--lines" and i + 1 < len(args):
            a, _, b = args[i + 1].partition("-")
            pointers["line_ranges"].append((int(a), int(b or a)))
        else:
            sys.stderr.write("assembler.py: unknown argument %r\n" % args[i])
            return 2
        i += 2
    with open(path, encoding="utf-8", errors="replace") as f:
        context = f.read()
    sys.stdout.write(extract_context_subset(context, pointers))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
