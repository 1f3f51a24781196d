package main

import (
	"io"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/baton-dev/baton/mcpserver"
)

func init() { register(newMCPCmd) }

func newMCPCmd() *cobra.Command {
	var root string
	var skills []string
	cmd := &cobra.Command{
		Use:   "mcp [--root DIR]",
		Short: "Serve baton's tools to a host agent over the Model Context Protocol (stdio)",
		Long: `mcp serves baton's deterministic tools over the Model Context Protocol on
standard input and output, for a host agent (Claude Code, Codex, Cursor) to
call: outline, slice and count_tokens. Standard output carries only the
protocol; messages go to standard error. Every path a tool is given is
confined to --root (default: the working directory). A text result over
60 KB (about 15k tokens) is not returned inline: it is written under
.baton/mcp in the root, and the result says where and how large it is.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bi, _ := debug.ReadBuildInfo()
			s, err := mcpserver.New(mcpserver.Config{Root: root, Version: versionString(bi), Skills: skills, Getenv: os.Getenv})
			if err != nil {
				return err
			}
			defer s.Close()
			return s.RunStdio(cmd.Context(), io.NopCloser(cmd.InOrStdin()), nopWriteCloser{cmd.OutOrStdout()})
		},
	}
	cmd.Flags().StringVar(&root, "root", ".", "the folder every path is confined to")
	cmd.Flags().StringArrayVar(&skills, "skills", nil, "folder of custom skills for ask, skills_list, skill_get and the prompts; overrides built-ins by name (repeatable)")
	return cmd
}

// nopWriteCloser lets the protocol close its side without closing the
// process's standard output under it.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
