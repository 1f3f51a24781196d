package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// readmeTableCommand is the first cell of a row of the README's command
// table: a command path in a code span.
var readmeTableCommand = regexp.MustCompile("^\\| `(baton(?: [a-z]+)*)` \\|")

// Every command in the README's table is a command of baton's, named by its
// full path, and every command of baton's (but help and completion) is in
// the table.
func TestReadmeCommandTableMatchesBaton(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	root := newRootCmd()
	listed := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		m := readmeTableCommand.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		listed[m[1]] = true
		c, rest, err := root.Find(strings.Fields(m[1])[1:])
		if err != nil || len(rest) > 0 || c.CommandPath() != m[1] {
			t.Errorf("the README's table lists %q, which baton help does not have", m[1])
		}
	}
	if len(listed) == 0 {
		t.Fatal("the README has no command table")
	}
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if !listed[c.CommandPath()] && !anyListedUnder(listed, c) {
			t.Errorf("%q is missing from the README's command table", c.CommandPath())
		}
	}
}

// anyListedUnder reports whether the table lists a subcommand of c, as it
// lists "baton ledger lint" for "baton ledger".
func anyListedUnder(listed map[string]bool, c *cobra.Command) bool {
	for p := range listed {
		if strings.HasPrefix(p, c.CommandPath()+" ") {
			return true
		}
	}
	return false
}

// synopsisFlag finds the flags a synopsis line names.
var synopsisFlag = regexp.MustCompile(`--[a-z][a-z-]*`)

// Every line of the command reference's synopsis names a command baton has,
// and every flag it shows for that command is one the command takes.
func TestCommandReferenceFlagsExist(t *testing.T) {
	data, err := os.ReadFile("../../docs/reference/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(data), "```text\n")
	if !ok {
		t.Fatal("docs/reference/commands.md has no synopsis block")
	}
	block, _, _ = strings.Cut(block, "```")
	root := newRootCmd()
	var cur *cobra.Command
	seen := 0
	for _, line := range strings.Split(block, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if strings.HasPrefix(line, "baton ") {
			var words []string
			for _, w := range strings.Fields(line)[1:] {
				if strings.ToLower(w) != w || strings.ContainsAny(w, "[-|(\"") {
					break
				}
				words = append(words, w)
			}
			c, _, err := root.Find(words)
			if err != nil || c == root {
				t.Errorf("synopsis line %q names no command of baton's", line)
				cur = nil
				continue
			}
			cur = c
			seen++
		}
		if cur == nil {
			continue
		}
		for _, f := range synopsisFlag.FindAllString(line, -1) {
			name := strings.TrimPrefix(f, "--")
			if name == "version" && cur.Name() == "version" {
				continue // baton --version, shown beside baton version
			}
			if cur.Flags().Lookup(name) == nil && cur.InheritedFlags().Lookup(name) == nil && cur.PersistentFlags().Lookup(name) == nil {
				t.Errorf("%s: the synopsis shows %s, which it does not take", cur.CommandPath(), f)
			}
		}
	}
	if seen < 15 {
		t.Errorf("the synopsis names only %d commands", seen)
	}
}
