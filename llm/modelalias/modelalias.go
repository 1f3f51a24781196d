// Package modelalias turns the model: key of a SKILL.md into the model a
// step's requests name, for the provider the run uses.
//
// Suites written for Claude Code name models by tier (opus, sonnet,
// haiku) or in full. The tiers map to Anthropic models only:
//
//	provider    opus             sonnet             haiku
//	anthropic   claude-opus-4-5  claude-sonnet-4-5  claude-haiku-4-5
//	openai      not honoured     not honoured       not honoured
//	ollama      not honoured     not honoured       not honoured
//
// An OpenAI-compatible server or Ollama has no Claude tiers, and picking a
// stand-in (a "big" and a "small" model of another vendor) would change
// what the skill's author tested against and what the run costs without
// anyone choosing it; so the run's own model is used and the caller warns.
// A full model name is passed through: for Anthropic it must be a Claude
// model (claude-…); for the others any name is the server's to judge, as a
// gateway may route "anthropic/claude-sonnet-4.5" or Ollama serve
// "mistral". "inherit" (and "default") mean the run's model, as they do in
// Claude Code.
package modelalias

import (
	"errors"
	"fmt"
	"maps"
	"strings"
)

// Provider names, as package provider reports them.
const (
	Anthropic = "anthropic"
	OpenAI    = "openai"
	Ollama    = "ollama"
)

// ErrNotHonoured is wrapped when a skill's model cannot be used with the
// run's provider; the caller then uses the run's model and says so.
var ErrNotHonoured = errors.New("cannot be honoured")

// anthropic maps the tiers to current models whose windows package tokens
// knows. Sonnet is the provider's default model, so a suite that names it
// changes nothing.
var anthropic = map[string]string{
	"opus":   "claude-opus-4-5",
	"sonnet": "claude-sonnet-4-5",
	"haiku":  "claude-haiku-4-5",
}

// Aliases returns provider's alias table (empty for providers that honour
// none).
func Aliases(provider string) map[string]string {
	if provider == Anthropic {
		return maps.Clone(anthropic)
	}
	return map[string]string{}
}

// Resolve returns the model a skill whose model: key is name should use
// with provider. "" means the run's own model (name is empty, inherit or
// default). An error wrapping ErrNotHonoured says why name cannot be used.
func Resolve(provider, name string) (string, error) {
	name = strings.TrimSpace(name)
	key := strings.ToLower(name)
	switch key {
	case "", "inherit", "default":
		return "", nil
	}
	if _, tier := anthropic[key]; tier {
		if provider == Anthropic {
			return anthropic[key], nil
		}
		if provider == "" {
			return "", fmt.Errorf("model %q: %w: the provider is unknown, so the alias cannot be mapped", name, ErrNotHonoured)
		}
		return "", fmt.Errorf("model %q: %w: it names a Claude tier, which the %s provider does not serve; give the skill a full model name", name, ErrNotHonoured, provider)
	}
	if provider == Anthropic && !strings.HasPrefix(key, "claude-") {
		return "", fmt.Errorf("model %q: %w: it is neither opus, sonnet, haiku nor a Claude model name (claude-…)", name, ErrNotHonoured)
	}
	return name, nil
}
