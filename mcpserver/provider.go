package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/provider"
)

// providerVars are the variables ask picks its provider from.
var providerVars = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST"}

// unexpanded reports whether v is a host's placeholder left as it was:
// Claude Code passes "${VAR}" through as text when VAR is not set where it
// runs, and Cursor does the same with "${env:VAR}".
func unexpanded(v string) bool {
	v = strings.TrimSpace(v)
	return strings.HasPrefix(v, "${") && strings.HasSuffix(v, "}")
}

// hostEnv reads getenv, with a placeholder left unexpanded read as unset:
// taken as it is, "${ANTHROPIC_API_KEY}" would be sent as an API key.
func hostEnv(getenv func(string) string) func(string) string {
	return func(k string) string {
		if v := getenv(k); !unexpanded(v) {
			return v
		}
		return ""
	}
}

// ProviderStatus is one line that says which provider and model ask will
// call, from the server's environment, or that it found none and what to
// set; never a key. baton mcp prints it at start, on standard error, where a
// host keeps the server's log. ctx bounds the look for a local Ollama.
func (s *Server) ProviderStatus(ctx context.Context) string {
	var placeholders []string
	for _, k := range providerVars {
		if v := s.rawEnv(k); unexpanded(v) {
			placeholders = append(placeholders, fmt.Sprintf("%s was passed as the text %s, which the host did not expand: it is not set where the host runs", k, strings.TrimSpace(v)))
		}
	}
	var line string
	sel, err := provider.Resolve(ctx, provider.Options{}, s.getenv)
	switch {
	case err == nil:
		line = "ask calls " + sel.String()
	case errors.Is(err, llm.ErrNoProvider):
		line = "no model provider found: ask answers with an error unless called with dry_run: true; set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL in the environment baton mcp is started with, or start Ollama at OLLAMA_HOST"
	default:
		line = "the model provider is not usable, ask will fail: " + oneLine(err.Error())
	}
	if len(placeholders) > 0 {
		line += " (" + strings.Join(placeholders, "; ") + ")"
	}
	return line
}
