package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/baton-dev/baton/skill"
)

func init() { register(newSkillsCmd) }

func newSkillsCmd() *cobra.Command {
	var dirs []string
	cmd := &cobra.Command{
		Use:   "skills",
		Short: "List, show and validate the skills sub-agents run with",
		Long: `A skill is a SKILL.md file: YAML frontmatter naming and describing the skill,
then a markdown body that baton sends as a sub-agent's system prompt. baton
ships eight analytical skills; --skills adds your own, and a custom skill
replaces a built-in of the same name.

--skills takes a skill folder, a SKILL.md, or a folder holding skill folders
at any depth (hidden folders and node_modules are skipped, symlinked folders
are not walked), and may be repeated.`,
		// Without a RunE cobra prints help for any stray word and exits 0,
		// which would hide a mistyped subcommand.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("unknown skills command %q (want list, show or validate)", args[0])
			}
			return cmd.Help()
		},
	}
	cmd.PersistentFlags().StringArrayVar(&dirs, "skills", nil, "custom skill folder, SKILL.md, or folder holding skill folders at any depth (repeatable)")
	cmd.AddCommand(newSkillsListCmd(&dirs), newSkillsShowCmd(&dirs), newSkillsValidateCmd(&dirs))
	return cmd
}

// loadSkillLibrary builds the built-in library plus the --skills folders. An
// invalid custom skill fails the command: silently running without a skill
// the user asked for would give answers they did not expect.
func loadSkillLibrary(dirs []string, stderr io.Writer) (*skill.Library, error) {
	lib := skill.Builtins()
	for _, d := range dirs {
		ps, err := lib.AddDir(d)
		if err == nil {
			continue
		}
		if !errors.Is(err, skill.ErrInvalidSkill) {
			return nil, fmt.Errorf("--skills %s: %s", d, skillsScanError(err))
		}
		n := 0
		for _, p := range ps {
			if p.Severity == skill.Error {
				fmt.Fprintln(stderr, p)
				n++
			}
		}
		return nil, fmt.Errorf("--skills %s: %s; run baton skills validate %s", d, skillsPlural(n, "error"), d)
	}
	return lib, nil
}

func newSkillsListCmd(dirs *[]string) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the available skills",
		Args:  skillsNoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			lib, err := loadSkillLibrary(*dirs, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSOURCE\tDESCRIPTION")
			for _, s := range lib.List() {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, s.Source(), skillsOneLine(s.Description, 160))
			}
			return tw.Flush()
		},
	}
}

func newSkillsShowCmd(dirs *[]string) *cobra.Command {
	return &cobra.Command{
		Use:   "show NAME",
		Short: "Print a skill's fields and the system prompt it gives a sub-agent",
		Long: `show prints a skill's frontmatter fields and then its body, the system prompt
a sub-agent assigned the skill receives. NAME matches regardless of case, and
underscores match hyphens, as they do in plans.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("skills show needs exactly one skill NAME")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			lib, err := loadSkillLibrary(*dirs, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			s, ok := lib.Get(args[0])
			if !ok {
				return fmt.Errorf("unknown skill %q; available: %s", args[0], strings.Join(lib.Names(), ", "))
			}
			w := cmd.OutOrStdout()
			field := func(k, v string) {
				if v != "" {
					fmt.Fprintf(w, "%-15s%s\n", k+":", strings.ReplaceAll(v, "\n", "\n"+strings.Repeat(" ", 15)))
				}
			}
			field("name", s.Name)
			field("source", s.Source())
			field("description", s.Description)
			field("license", s.License)
			field("compatibility", s.Compatibility)
			field("allowed-tools", strings.Join(s.AllowedTools, " "))
			field("model", s.Model)
			if len(s.Metadata) > 0 {
				fmt.Fprintln(w, "metadata:")
				keys := make([]string, 0, len(s.Metadata))
				for k := range s.Metadata {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					fmt.Fprintf(w, "  %s: %s\n", k, s.Metadata[k])
				}
			}
			fmt.Fprintf(w, "\n%s\n", s.Body)
			return nil
		},
	}
}

func newSkillsValidateCmd(dirs *[]string) *cobra.Command {
	return &cobra.Command{
		Use:   "validate DIR...",
		Short: "Check skills against the Agent Skills specification",
		Long: `validate checks each DIR (a skill folder, a SKILL.md, or a folder holding
skill folders at any depth) and any --skills folders, and prints every
problem as

  error: PATH: FIELD: MESSAGE      the skill cannot be used
  warning: PATH: FIELD: MESSAGE    the skill loads, but other hosts may differ

then a summary. It exits 1 only when there are errors.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && len(*dirs) == 0 {
				return usageErrorf("skills validate needs at least one DIR")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			var checked, nerr, nwarn int
			for _, d := range append(append([]string(nil), args...), *dirs...) {
				results, err := skill.Scan(d)
				if err != nil {
					fmt.Fprintf(w, "error: %s: file: %s\n", d, skillsScanError(err))
					nerr++
					continue
				}
				checked += len(results)
				for _, r := range results {
					for _, p := range r.Problems {
						fmt.Fprintln(w, p)
						if p.Severity == skill.Error {
							nerr++
						} else {
							nwarn++
						}
					}
				}
			}
			fmt.Fprintf(w, "checked %s: %s, %s\n", skillsPlural(checked, "skill"), skillsPlural(nerr, "error"), skillsPlural(nwarn, "warning"))
			if nerr > 0 {
				return withCode(exitError, nil)
			}
			return nil
		},
	}
}

// skillsScanError says why a path yielded no skills, without the package
// prefix and repeated path the wrapped errors carry.
func skillsScanError(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "does not exist"
	case errors.Is(err, skill.ErrNoSkill):
		return "no " + skill.FileName + " in it or in any folder below it"
	default:
		return unwrapPath(err).Error()
	}
}

func skillsNoArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("%s takes no arguments, got %q", cmd.CommandPath(), args[0])
	}
	return nil
}

func skillsPlural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// skillsOneLine collapses whitespace and shortens s to max runes, so a long or
// multi-line description does not break a table.
func skillsOneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:max-3])) + "..."
}
