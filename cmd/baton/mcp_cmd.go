package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/baton-dev/baton/history"
	"github.com/baton-dev/baton/mcpserver"
	"github.com/baton-dev/baton/orchestrate"
)

func init() { register(newMCPCmd) }

// tokenEnv holds the bearer token of `baton mcp --http`; it is read from
// the environment, never from a flag, so that it is not in `ps` output or
// shell history.
const tokenEnv = "BATON_MCP_TOKEN"

// mcpFlags are mcp's command line.
type mcpFlags struct {
	root      string
	skills    []string
	httpAddr  string
	maxResult int
	ledgers   []string
	states    []string
}

func newMCPCmd() *cobra.Command {
	var f mcpFlags
	cmd := &cobra.Command{
		Use:   "mcp [--root DIR] [--http ADDR] [--max-result BYTES] [--skills DIR] [--ledger PATH] [--state PATH]",
		Short: "Serve baton's tools to a host agent over the Model Context Protocol (stdio or HTTP)",
		Long: `mcp serves baton's deterministic tools over the Model Context Protocol for a
host agent (Claude Code, Codex, Cursor) to call: outline, slice,
count_tokens, budget_check, ledger_append, ledger_latest, ledger_lint,
state_get, state_set, ask, skills_list and skill_get; every skill is also a
prompt. Every path a tool is given is confined to --root (default: the
working directory). ask calls the provider set in the server's environment
(as baton ask does); with none set it answers with an error that says what
to set, unless called with dry_run: true. At start, baton mcp writes one
line to standard error naming the provider and model ask will call, or
saying that it found none.

Without --http it speaks on standard input and output: standard output
carries only the protocol; messages go to standard error. A line that is
not a JSON-RPC message is answered with the JSON-RPC error (-32700 or
-32600) and the server goes on; a line over 16 MiB is skipped.

--http ADDR serves Streamable HTTP at http://ADDR/mcp instead (HOST:PORT; a
port of 0 picks a free one, an empty host is 127.0.0.1). Once listening it
writes a line to standard error: "baton: mcp: serving http://HOST:PORT/mcp".
A request whose Host is not a loopback name on a loopback address, or a
browser's cross-origin request, is refused. When ` + tokenEnv + ` is set,
every request must carry "Authorization: Bearer <token>"; it must be set to
serve on an address that is not loopback. Ctrl-C stops the server, letting
calls in flight finish.

ledger_append writes only the ledgers given with --ledger and state_set
only the state files given with --state (paths relative to --root, each
flag repeatable; the first is what a call that names none uses). Without
them, the ledger: and state: of the root's baton.yaml hold, else
specs/ledger.md and specs/state.yaml; a baton.yaml that is not a valid
workflow declares nothing. Any other path is refused, as is one the write
policy denies. The reading tools read any path the read policy allows.

No result is larger than --max-result bytes (default 61440, about 15k
tokens), counted as sent: a text that would take a result past it is written
under .baton/mcp in the root, and the result says where and how large it is.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return f.serve(cmd) },
	}
	cmd.Flags().StringVar(&f.root, "root", ".", "the folder every path is confined to")
	cmd.Flags().StringArrayVar(&f.skills, "skills", nil, "folder of custom skills for ask, skills_list, skill_get and the prompts; overrides built-ins by name (repeatable)")
	cmd.Flags().StringVar(&f.httpAddr, "http", "", "serve Streamable HTTP on `ADDR` (HOST:PORT, e.g. 127.0.0.1:0) instead of stdio")
	cmd.Flags().StringArrayVar(&f.ledgers, "ledger", nil, "a ledger ledger_append may write, relative to --root (repeatable); default the ledger: of the root's baton.yaml, else specs/ledger.md")
	cmd.Flags().StringArrayVar(&f.states, "state", nil, "a state file state_set may write, relative to --root (repeatable); default the state: of the root's baton.yaml, else specs/state.yaml")
	cmd.Flags().IntVar(&f.maxResult, "max-result", mcpserver.DefaultMaxResultBytes, "the largest tool result sent, in `BYTES`; a text that would pass it is written under .baton/mcp instead")
	return cmd
}

func (f *mcpFlags) serve(cmd *cobra.Command) error {
	if f.maxResult < mcpserver.MinResultBytes {
		return usageErrorf("--max-result %d: want a number of bytes, at least %d (room for a result that says where a spilled text went)", f.maxResult, mcpserver.MinResultBytes)
	}
	if _, _, err := net.SplitHostPort(f.httpAddr); f.httpAddr != "" && err != nil {
		return usageErrorf("--http %q: want HOST:PORT, such as 127.0.0.1:8765", f.httpAddr)
	}
	// One tracer for the process, flushed when the server stops; off
	// unless an OTLP endpoint is set.
	tracer, flush, err := startTelemetry(cmd.Context(), cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	defer flush()
	bi, _ := debug.ReadBuildInfo()
	s, err := mcpserver.New(mcpserver.Config{Root: f.root, Version: versionString(bi), MaxResultBytes: f.maxResult, Skills: f.skills, Getenv: os.Getenv, Tracer: tracer,
		Ledgers: f.ledgers, States: f.states,
		OnRecord: func(rec *orchestrate.Record, path string) error {
			// Messages on stderr would be a stdio host's log only; the
			// ask result carries the warning instead.
			return withHistory(io.Discard, func(d *history.DB) error { return d.IndexRecord(rec, path) })
		}})
	if errors.Is(err, mcpserver.ErrBadDeclaration) {
		return usageErrorf("%v", err)
	}
	if err != nil {
		return err
	}
	defer s.Close()
	// A host keeps the server's standard error as its log: the one place
	// to learn, before any ask, whether ask has a provider.
	stderr := cmd.ErrOrStderr()
	status := func() { fmt.Fprintf(stderr, "baton: mcp: %s\n", s.ProviderStatus(cmd.Context())) }
	if f.httpAddr == "" {
		status()
		return s.RunStdio(cmd.Context(), io.NopCloser(cmd.InOrStdin()), nopWriteCloser{cmd.OutOrStdout()})
	}
	return f.serveHTTP(cmd, s, status)
}

// serveHTTP serves s on --http until the command's context ends. The
// status line comes once the address is known to be served: an address
// refused is then the only line.
func (f *mcpFlags) serveHTTP(cmd *cobra.Command, s *mcpserver.Server, status func()) error {
	err := s.ListenAndServe(cmd.Context(), f.httpAddr, mcpserver.HTTPOptions{Token: os.Getenv(tokenEnv)}, func(url string) {
		status()
		fmt.Fprintf(cmd.ErrOrStderr(), "baton: mcp: serving %s\n", url)
	})
	if errors.Is(err, mcpserver.ErrTokenRequired) {
		return usageErrorf("mcp: --http %s is not a loopback address: set %s to the bearer token clients must send", f.httpAddr, tokenEnv)
	}
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}

// nopWriteCloser lets the protocol close its side without closing the
// process's standard output under it.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
