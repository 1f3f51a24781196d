// Package mcpserver serves baton's deterministic pieces over the Model
// Context Protocol, so that a host agent (Claude Code, Codex, Cursor) calls
// them as tools instead of being asked in prose to slice context and count
// tokens. It is built on the official Go SDK; every path a host passes is
// confined to the server's root with os.Root, as `baton run`'s tools are,
// and inside it to what baton's write policy allows (package writepolicy:
// never git's files, baton's own, workflow, skill, host, hook or CI
// configuration; git's files and secrets not read either). The writing
// tools write only the ledgers and state files the server is given or the
// root's baton.yaml declares (declared.go).
//
// The tools: outline, slice and count_tokens read documents; budget_check
// is the reset rule of `baton run`; ledger_append, ledger_latest and
// ledger_lint keep the ledger; state_get and state_set edit state.yaml
// losslessly under baton run's lock; ask runs `baton ask` on the
// configured provider and saves a run record under .baton/runs;
// skills_list and skill_get show the skill library, and every skill is
// also a prompt. Every result is bounded (spill.go, bound.go), and so is
// every documents list (documents.go, listbound.go); every schema is
// portable (schema.go). The transport is stdio (stdio.go: a
// malformed line is answered, not fatal) or Streamable HTTP (http.go).
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/baton-dev/baton/internal/spill"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/skill"
	"github.com/baton-dev/baton/telemetry"
)

// Config is one server.
type Config struct {
	// Root is the folder every path is confined to.
	Root string
	// Version is reported in initialize.
	Version string
	// MaxResultBytes bounds a tool result as sent, structuredContent and
	// its text mirror together (DefaultMaxResultBytes when 0); a text that
	// would take a result past it is spilled to a file (spill.go), and any
	// other result past it is saved whole (bound.go).
	MaxResultBytes int
	// Skills are folders of custom skills (--skills) added to the
	// built-ins, for ask, skills_list, skill_get and the prompts.
	Skills []string
	// Getenv reads the environment ask picks its provider from
	// (ANTHROPIC_API_KEY, OPENAI_BASE_URL...); nil is os.Getenv. A value
	// that is a host's placeholder left unexpanded ("${VAR}") is unset.
	Getenv func(string) string
	// OnRecord, when set, is called with each run record ask saves and
	// its path (baton mcp indexes it in the run history, as baton ask
	// does); an error it returns is one of the result's warnings, never a
	// failed ask.
	OnRecord func(rec *orchestrate.Record, path string) error
	// Tracer, when set, gets the spans of every ask call, as baton ask
	// makes them (package telemetry): one trace per call. The process
	// sets it up once; nil traces nothing.
	Tracer trace.Tracer
	// Ledgers are the ledgers ledger_append may write and States the
	// state files state_set may write: root-relative paths (baton mcp
	// --ledger and --state). The first of each is what the tools use when
	// a call names none. An empty list is the root's declaration: the
	// ledger: or state: of its baton.yaml, or specs/ledger.md and
	// specs/state.yaml (declared.go).
	Ledgers []string
	States  []string
	// SpillMaxAge, SpillMaxBytes and SpillMaxFiles bound SpillDir: on
	// each new spill, spill files older than SpillMaxAge are removed,
	// then the oldest until the rest hold at most SpillMaxBytes in at
	// most SpillMaxFiles files (spill.go). 0 is the default
	// (DefaultSpillMaxAge, DefaultSpillMaxBytes, DefaultSpillMaxFiles);
	// a negative value is no bound of that kind.
	SpillMaxAge   time.Duration
	SpillMaxBytes int64
	SpillMaxFiles int
}

// Server is baton's MCP server: the SDK's server with baton's tools added.
type Server struct {
	mcp       *mcp.Server
	root      *os.Root
	maxResult int

	skills        *skill.Library // the built-ins and Config.Skills (ask.go, skills.go)
	skillWarnings []string
	getenv        func(string) string // rawEnv, a host's unexpanded placeholder read as unset (provider.go)
	rawEnv        func(string) string
	onRecord      func(*orchestrate.Record, string) error
	tracer        trace.Tracer
	declared      map[string][]string // Config.Ledgers and States, cleaned, by kind (declared.go)

	spillMu     sync.Mutex // one spill written and pruned at a time
	spillLimits spill.Limits

	docOps docOps // the file system work of the document tools, for tests
}

// New opens the root and registers the tools.
func New(cfg Config) (*Server, error) {
	if cfg.Root == "" {
		cfg.Root = "."
	}
	root, err := os.OpenRoot(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("mcp root %q: %w", cfg.Root, err)
	}
	switch {
	case cfg.MaxResultBytes == 0:
		cfg.MaxResultBytes = DefaultMaxResultBytes
	case cfg.MaxResultBytes < MinResultBytes:
		root.Close()
		return nil, fmt.Errorf("mcp result bound %d bytes: want at least %d", cfg.MaxResultBytes, MinResultBytes)
	}
	s := &Server{root: root, maxResult: cfg.MaxResultBytes, mcp: mcp.NewServer(&mcp.Implementation{Name: "baton", Version: cfg.Version}, nil),
		declared: map[string][]string{}}
	for k, paths := range map[declaredKind][]string{ledgerKind: cfg.Ledgers, stateKind: cfg.States} {
		if s.declared[k.kind], err = checkDeclared(k, paths); err != nil {
			root.Close()
			return nil, err
		}
	}
	if s.skills, s.skillWarnings, err = loadSkills(cfg.Skills); err != nil {
		root.Close()
		return nil, err
	}
	s.onRecord = cfg.OnRecord
	s.spillLimits = spillLimits(cfg)
	if s.tracer = cfg.Tracer; s.tracer == nil {
		s.tracer = noop.NewTracerProvider().Tracer(telemetry.ScopeName)
	}
	if s.rawEnv = cfg.Getenv; s.rawEnv == nil {
		s.rawEnv = os.Getenv
	}
	s.getenv = hostEnv(s.rawEnv)
	s.addTools()
	s.mcp.AddReceivingMiddleware(s.bound, s.boundLists)
	return s, nil
}

// SDK returns the underlying SDK server, for transports of the caller's
// choosing (tests use the in-memory one).
func (s *Server) SDK() *mcp.Server { return s.mcp }

// Close releases the root.
func (s *Server) Close() error { return s.root.Close() }

// RunStdio serves one session over in and out until the client closes it
// or ctx ends. out carries only the protocol. A line the SDK cannot read
// is answered with its JSON-RPC error and the session goes on (stdio.go).
func (s *Server) RunStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	err := s.mcp.Run(ctx, &stdioTransport{in: in, out: out})
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
