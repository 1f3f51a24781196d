#!/bin/sh
# A scripted stand-in for a command-line agent running examples/suite under
# `baton run --agent-cmd`. Like a real agent following the suite's skills,
# it does each step's work in the workspace (its working directory) and
# keeps the handoff in specs/state.yaml by editing the file itself; two
# steps also end with a fenced handoff block. POSIX sh and awk only, so it
# runs on Linux and macOS alike.
#
# With SUITE_LOG set, each call appends "<step> <skill>" to $SUITE_LOG/calls
# and keeps its stdin in $SUITE_LOG/input-<step>.txt.
set -eu
state=specs/state.yaml
input=$(cat)
if [ -n "${SUITE_LOG:-}" ]; then
	echo "$BATON_STEP $BATON_SKILL" >>"$SUITE_LOG/calls"
	printf '%s\n' "$input" >"$SUITE_LOG/input-$BATON_STEP.txt"
fi

# set_handoff KEY VALUE: give handoff.KEY the one-line VALUE.
set_handoff() {
	awk -v key="$1" -v val="$2" '
		/^[^ #]/ { inh = ($0 ~ /^handoff:/) }
		inh && index($0, "  " key ":") == 1 { print "  " key ": " val; next }
		{ print }' "$state" >"$state.tmp"
	mv "$state.tmp" "$state"
}

# set_summary TEXT: make TEXT (lines split by \n) the | block under
# handoff.last_step_completed.
set_summary() {
	awk -v text="$1" '
		/^[^ #]/ { inh = ($0 ~ /^handoff:/) }
		skip && /^    / { next }
		{ skip = 0 }
		inh && /^  last_step_completed:/ {
			print "  last_step_completed: |"
			n = split(text, lines, "\n")
			for (i = 1; i <= n; i++) print "    " lines[i]
			skip = 1
			next
		}
		{ print }' "$state" >"$state.tmp"
	mv "$state.tmp" "$state"
}

# list_self: append this skill to the comma-separated
# suite_cycle.completed_steps, as some suites tell their agents to.
list_self() {
	awk -v me="$BATON_SKILL" '
		/^[^ #]/ { inc = ($0 ~ /^suite_cycle:/) }
		inc && /^  completed_steps: "/ {
			match($0, /"[^"]*"/)
			v = substr($0, RSTART + 1, RLENGTH - 2)
			rest = substr($0, RSTART + RLENGTH)
			if (v == "") v = me; else v = v ", " me
			print "  completed_steps: \"" v "\"" rest
			next
		}
		{ print }' "$state" >"$state.tmp"
	mv "$state.tmp" "$state"
}

fence='```'
case "$BATON_SKILL" in
frame-problem)
	printf '# Problem\n\nExpected: blank lines are skipped (docs/issue.md:11).\nSeen: a ValueError on an empty line (docs/issue.md:5).\nMust not change: the output is one number (docs/issue.md:12).\n' >specs/problem.md
	set_handoff context '"csvsum crashes on a blank line; see specs/problem.md"'
	set_summary 'frame-problem: wrote specs/problem.md.\nThe fix must keep the one-number output (docs/issue.md:12).'
	set_handoff next_skill map-code
	echo "Framed the problem in specs/problem.md."
	;;
map-code)
	printf '# Code map\n\n- src/csvsum.py:8: every line goes to float(), blank or not\n- tests/test_csvsum.py:11: the only test; no blank line in it\n' >specs/code-map.md
	# This step answers with a handoff block and leaves the file to baton.
	cat <<END
Mapped the code.

${fence}handoff
next_skill: design-fix
required_reading: [specs/code-map.md]
summary: |
  Mapped the reading loop: src/csvsum.py:8 sends every line to float().
  No test has a blank line (tests/test_csvsum.py:11).
${fence}
END
	;;
design-fix)
	printf '# Design\n\nRule: skip lines that are empty after stripping; any other line that is not a number stops csvsum with "line N: not a number".\n\n- "1, blank, 2" gives 3.0\n- "1, x" gives line 2: not a number\n' >specs/design.md
	set_handoff next_skill write-fix
	set_summary 'design-fix: skip blank lines, name any other bad line.\nThe rule and two examples are in specs/design.md.'
	# Both ways at once: the decision and the open question go in a block.
	cat <<END
Designed the fix.

${fence}handoff
open_decisions:
  - should a line of only spaces count as blank?
decisions:
  - decision: skip blank lines; report any other bad line by its number
    evidence: specs/design.md:3
${fence}
END
	;;
write-fix)
	awk '/result \+= float\(line\)/ { print "        if not line.strip():"; print "            continue" } { print }' src/csvsum.py >src/csvsum.py.tmp
	mv src/csvsum.py.tmp src/csvsum.py
	printf '\n\nclass BlankLineTest(unittest.TestCase):\n    def test_skips_blank_lines(self):\n        self.assertEqual(csvsum.total(["1", "", "2"]), 3.0)\n' >>tests/test_csvsum.py
	set_handoff next_skill review-fix
	set_summary 'write-fix: src/csvsum.py skips blank lines; a test covers it.\nCheck: python3 -m unittest tests/test_csvsum.py'
	list_self
	echo "Wrote the fix."
	;;
review-fix)
	printf '# Review\n\n- blank lines skipped: src/csvsum.py:9\n- output format unchanged: src/csvsum.py:15\n- users will notice: yes, the billing export stops failing\n' >specs/review.md
	# The skill's default is done; the agent decides the notes are needed.
	set_handoff next_skill release-notes
	set_summary 'review-fix: the change meets the design (specs/review.md).\nUsers will notice it, so release notes follow.'
	echo "Reviewed the fix."
	;;
release-notes)
	printf -- '- csvsum skips blank lines instead of stopping with an error (DT-311).\n' >>CHANGELOG.md
	cat <<END
${fence}handoff
next_skill: done
summary: Added the DT-311 entry to CHANGELOG.md.
${fence}
END
	;;
*)
	echo "no script for skill $BATON_SKILL" >&2
	exit 3
	;;
esac
