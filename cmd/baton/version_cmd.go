package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

func init() { register(newVersionCmd) }

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print baton's version and the Go version that built it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), versionLine())
			return err
		},
	}
}

// versionLine is what both `baton version` and `baton --version` print.
func versionLine() string {
	bi, _ := debug.ReadBuildInfo()
	return fmt.Sprintf("baton %s, built with %s for %s/%s\n", versionString(bi), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// versionString is the main module's version as go install stamped it. A
// build from a checkout (go build, go run) has the version "(devel)"; the
// VCS revision go build records then says which commit it was.
func versionString(bi *debug.BuildInfo) string {
	if bi == nil {
		return "unknown (built without module information)"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, at string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel (no version control information)"
	}
	rev = rev[:min(len(rev), 12)]
	var notes []string
	if at != "" {
		notes = append(notes, at)
	}
	if modified {
		notes = append(notes, "modified")
	}
	if len(notes) == 0 {
		return "devel " + rev
	}
	return fmt.Sprintf("devel %s (%s)", rev, strings.Join(notes, ", "))
}
