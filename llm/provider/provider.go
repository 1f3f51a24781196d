// Package provider decides which model provider baton talks to, from the
// command-line flags and the environment, so that every command makes the same
// choice in the same order and explains it in the same words.
//
// The order is:
//
//  1. Flags: --provider (anthropic, openai or ollama) and --base-url. A base
//     URL without a provider means an OpenAI-compatible server, the protocol
//     local servers (vLLM, llama.cpp, LM Studio) speak.
//  2. ANTHROPIC_API_KEY: Anthropic, at ANTHROPIC_BASE_URL when set.
//  3. OPENAI_API_KEY or OPENAI_BASE_URL: an OpenAI-compatible server.
//  4. An Ollama server answering at OLLAMA_HOST (default 127.0.0.1:11434),
//     reached through its native chat API (package llm/ollama), so that
//     each request sets the context window the server runs it with (see
//     Selection.Window).
//
// When none applies, Resolve returns an error wrapping llm.ErrNoProvider.
//
// # Secrets
//
// An API key and a gateway's base URL are secrets: a gateway may take its
// token in the URL's path (https://gw.example/<token>/v1) or query string
// (?key=<token>). Nothing Resolve returns shows them. Selection.BaseURL and
// Selection.String show the URL masked by llm's rule (user information, query
// values and every path segment that is not a plain API word such as "v1" or
// "openai"; see llm.URLSecrets), every error Resolve returns is masked, and
// the client in Selection.LLM masks every error it returns with the whole
// secret set (the key and every secret part of the base URL), keeping a
// *llm.ProviderError's status, type and retry-after so the retry policy
// decides as before. Selection.Redactor masks the same set in any other text.
//
// User information in a base URL is refused: it belongs in the API key
// variable. A query string is carried to every request (the SDKs would drop
// it, since they resolve request paths against the base URL), so gateways
// and Azure-style ?api-version= endpoints work. OLLAMA_HOST takes no query
// string, as Ollama's own client takes none; one is refused.
package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/anthropic"
	"github.com/baton-dev/baton/llm/ollama"
	"github.com/baton-dev/baton/llm/openai"
	"github.com/baton-dev/baton/tokens"
)

// Provider names accepted by Options.Provider and reported in
// Selection.Provider.
const (
	Anthropic = "anthropic"
	OpenAI    = "openai"
	Ollama    = "ollama"
)

// Default models, used when the user names none with --model. They are
// capable, widely available and inexpensive enough for sub-agent work.
const (
	DefaultAnthropicModel = "claude-sonnet-4-5"
	DefaultOpenAIModel    = "gpt-4o-mini"
)

// Default endpoints. baton always passes a base URL to the SDKs, so that
// the SDKs never read the environment behind baton's back.
const (
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultOllamaHost       = "127.0.0.1:11434"
)

// OllamaProbeTimeout bounds the look for a local Ollama server. It is short
// because it runs whenever nothing else is configured, and a machine without
// Ollama should learn that at once.
const OllamaProbeTimeout = 500 * time.Millisecond

// ErrUnknownProvider is wrapped when Options.Provider names no provider baton
// knows; the command line treats it as a usage error.
var ErrUnknownProvider = errors.New("unknown provider")

// ErrMissingAPIKey is wrapped when a provider was chosen explicitly but its
// API key is not set.
var ErrMissingAPIKey = errors.New("API key not set")

// Options are the user's explicit choices, typically from flags. Empty fields
// leave the choice to the environment.
type Options struct {
	// Provider is "anthropic", "openai", "ollama" or "" to detect.
	Provider string
	// Model is the model name; "" takes the provider's default (for Ollama,
	// the first model the server lists).
	Model string
	// BaseURL overrides the provider's endpoint. For Ollama it is the server
	// address, like OLLAMA_HOST.
	BaseURL string
	// HTTPClient is used for model calls and for the Ollama probe; nil means
	// http.DefaultClient.
	HTTPClient *http.Client
	// Window is the context window the user asked for (--window), in
	// tokens; 0 for the default. Only Ollama is told a window (see
	// Selection.Window); the hosted providers' windows are fixed.
	Window int
}

// Selection is the provider Resolve chose. It holds no API key, so it is safe
// to print or log.
type Selection struct {
	// Provider is "anthropic", "openai" or "ollama".
	Provider string
	// Model is the model name requests will use.
	Model string
	// BaseURL is the endpoint the client talks to, with its secret parts
	// masked (llm.RedactURL), for display.
	BaseURL string
	// Source says what made the choice, for messages such as "using ollama
	// (found at OLLAMA_HOST)": a flag or an environment variable name.
	Source string
	// LLM is the provider client, without retries or limits; the caller
	// wraps it with llm.WithLimits and llm.WithRetry. Every error it returns
	// is already masked by Redactor.
	LLM llm.Model
	// Redactor masks the API key and the base URL's secret parts; callers
	// pass it to whatever quotes provider errors (orchestrate.Config).
	Redactor *llm.Redactor
	// Window, when > 0, is the context window in tokens the server was
	// told to run every request with (Ollama's options.num_ctx): callers
	// check their requests against it, so that the window baton checks is
	// the window the server uses. 0 means the provider's own, fixed
	// window applies (tokens.Window).
	Window int
	// ModelContextLength is the longest context the model supports, as
	// the server reported it (Ollama's /api/show); 0 when unknown.
	ModelContextLength int
}

// String describes the selection without any credential.
func (s *Selection) String() string {
	if s == nil {
		return "no provider"
	}
	out := fmt.Sprintf("%s model %s at %s", s.Provider, s.Model, s.BaseURL)
	if s.Source != "" {
		out += " (from " + s.Source + ")"
	}
	return out
}

// GoString keeps %#v from printing the client's internals.
func (s *Selection) GoString() string { return "provider.Selection{" + s.String() + "}" }

// Resolve chooses a provider from opts and the environment, read through env
// (nil means os.Getenv), and builds its client. ctx bounds the Ollama probe.
func Resolve(ctx context.Context, opts Options, env func(string) string) (*Selection, error) {
	if env == nil {
		env = os.Getenv
	}
	sel, err := resolve(ctx, opts, env)
	if err != nil {
		// Every message below may quote a configured URL or a server's
		// answer; mask whatever any of the variables holds.
		var secrets []string
		for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"} {
			secrets = append(secrets, strings.TrimSpace(env(k)))
		}
		for _, u := range []string{opts.BaseURL, env("ANTHROPIC_BASE_URL"), env("OPENAI_BASE_URL"), env("OLLAMA_HOST")} {
			secrets = append(secrets, llm.URLSecrets(strings.TrimSpace(u))...)
		}
		return nil, llm.NewRedactor(secrets...).Error(err)
	}
	return sel, nil
}

func resolve(ctx context.Context, opts Options, env func(string) string) (*Selection, error) {
	getenv := func(k string) string { return strings.TrimSpace(env(k)) }
	name := strings.ToLower(strings.TrimSpace(opts.Provider))
	opts.Model = strings.TrimSpace(opts.Model)
	opts.BaseURL = strings.TrimSpace(opts.BaseURL)

	switch name {
	case Anthropic:
		key := getenv("ANTHROPIC_API_KEY")
		if key == "" {
			return nil, fmt.Errorf("provider anthropic: %w: set ANTHROPIC_API_KEY", ErrMissingAPIKey)
		}
		return newAnthropic(opts, key, first(opts.BaseURL, getenv("ANTHROPIC_BASE_URL")), "--provider")
	case OpenAI:
		key := getenv("OPENAI_API_KEY")
		base := first(opts.BaseURL, getenv("OPENAI_BASE_URL"))
		if key == "" && base == "" {
			// A custom server may need no key; OpenAI's own API always does.
			return nil, fmt.Errorf("provider openai: %w: set OPENAI_API_KEY, or OPENAI_BASE_URL for a server that needs none", ErrMissingAPIKey)
		}
		return newOpenAI(opts, key, base, "--provider")
	case Ollama:
		host := first(opts.BaseURL, getenv("OLLAMA_HOST"))
		return newOllama(ctx, opts, host, "--provider")
	case "":
	default:
		return nil, fmt.Errorf("%w %q: want anthropic, openai or ollama", ErrUnknownProvider, opts.Provider)
	}

	if opts.BaseURL != "" {
		return newOpenAI(opts, getenv("OPENAI_API_KEY"), opts.BaseURL, "--base-url")
	}
	if key := getenv("ANTHROPIC_API_KEY"); key != "" {
		return newAnthropic(opts, key, getenv("ANTHROPIC_BASE_URL"), "ANTHROPIC_API_KEY")
	}
	if key, base := getenv("OPENAI_API_KEY"), getenv("OPENAI_BASE_URL"); key != "" || base != "" {
		src := "OPENAI_API_KEY"
		if key == "" {
			src = "OPENAI_BASE_URL"
		}
		return newOpenAI(opts, key, base, src)
	}
	host, src := getenv("OLLAMA_HOST"), "OLLAMA_HOST"
	if host == "" {
		host, src = DefaultOllamaHost, "Ollama's default address"
	}
	sel, err := newOllama(ctx, opts, host, src)
	if errors.Is(err, errOllamaUnreachable) && ctx.Err() == nil {
		return nil, fmt.Errorf("%w: set ANTHROPIC_API_KEY, set OPENAI_API_KEY or OPENAI_BASE_URL, or start an Ollama server at OLLAMA_HOST (no server answered at %s)",
			llm.ErrNoProvider, llm.RedactURL(host))
	}
	return sel, err
}

func newAnthropic(opts Options, key, base, src string) (*Selection, error) {
	raw := first(base, DefaultAnthropicBaseURL)
	base, query, err := normalizeURL(raw)
	if err != nil {
		return nil, fmt.Errorf("provider anthropic: %w", err)
	}
	red := llm.NewRedactor(append(llm.URLSecrets(raw), key)...)
	model := first(opts.Model, DefaultAnthropicModel)
	m, err := anthropic.New(anthropic.Config{APIKey: key, BaseURL: base, Model: model,
		HTTPClient: withQuery(opts.HTTPClient, query), CountTokens: tokens.ForModel(model).Count})
	if err != nil {
		return nil, red.Error(fmt.Errorf("provider anthropic: %w", err))
	}
	return &Selection{Provider: Anthropic, Model: model, BaseURL: llm.RedactURL(base + queryString(query)), Source: src,
		LLM: redacting{m, red}, Redactor: red}, nil
}

func newOpenAI(opts Options, key, base, src string) (*Selection, error) {
	raw := first(base, DefaultOpenAIBaseURL)
	base, query, err := normalizeURL(raw)
	if err != nil {
		return nil, fmt.Errorf("provider openai: %w", err)
	}
	red := llm.NewRedactor(append(llm.URLSecrets(raw), key)...)
	model := first(opts.Model, DefaultOpenAIModel)
	m, err := openai.New(openai.Config{APIKey: key, BaseURL: base, Model: model,
		HTTPClient: withQuery(opts.HTTPClient, query), CountTokens: tokens.ForModel(model).Count})
	if err != nil {
		return nil, red.Error(fmt.Errorf("provider openai: %w", err))
	}
	return &Selection{Provider: OpenAI, Model: model, BaseURL: llm.RedactURL(base + queryString(query)), Source: src,
		LLM: redacting{m, red}, Redactor: red}, nil
}

// errOllamaUnreachable marks a probe that found no server, as opposed to a
// server that answered with something unusable.
var errOllamaUnreachable = errors.New("no Ollama server answered")

func newOllama(ctx context.Context, opts Options, host, src string) (*Selection, error) {
	root, err := OllamaURL(host)
	if err != nil {
		return nil, fmt.Errorf("provider ollama: %w", err)
	}
	models, err := probeOllama(ctx, opts.HTTPClient, root)
	if err != nil {
		return nil, fmt.Errorf("provider ollama: %w", err)
	}
	model := opts.Model
	if model == "" {
		if len(models) == 0 {
			return nil, fmt.Errorf("provider ollama: the server at %s lists no models: pull one with 'ollama pull <model>' or name one with --model", llm.RedactURL(root))
		}
		model = models[0]
	}
	red := llm.NewRedactor(llm.URLSecrets(host)...)
	ctxLen := showContextLength(ctx, opts.HTTPClient, root, model)
	window := OllamaWindow(model, opts.Window, ctxLen)
	m, err := ollama.New(ollama.Config{BaseURL: root, Model: model, NumCtx: window, HTTPClient: opts.HTTPClient})
	if err != nil {
		return nil, red.Error(fmt.Errorf("provider ollama: %w", err))
	}
	return &Selection{Provider: Ollama, Model: model, BaseURL: llm.RedactURL(root), Source: src,
		LLM: redacting{m, red}, Redactor: red, Window: window, ModelContextLength: ctxLen}, nil
}

// DefaultOllamaWindow caps the window baton asks Ollama for when --window
// is not given. Ollama allocates its key-value cache for the whole window
// when it loads a model, so asking for a model's full 128k tokens can take
// more memory than a laptop has; 32k tokens fits common machines with the
// small models people run locally. --window raises or lowers it.
const DefaultOllamaWindow = 32768

// OllamaWindow is the window (num_ctx) baton asks Ollama to run model with:
// the user's --window when given, else the model's known window
// (tokens.Window) up to DefaultOllamaWindow; never more than the model's
// own context length (ctxLen, from /api/show; 0 when unknown), which
// Ollama would not exceed anyway.
func OllamaWindow(model string, window, ctxLen int) int {
	w := window
	if w <= 0 {
		known, _ := tokens.Window(model, 0)
		w = min(known, DefaultOllamaWindow)
	}
	if ctxLen > 0 && w > ctxLen {
		w = ctxLen
	}
	return w
}

// showContextLength asks Ollama (POST /api/show) for the longest context
// model supports: model_info's "<architecture>.context_length". It returns
// 0 when the server does not say; that is not an error, since the window
// baton asks for then stands unchecked, as before.
func showContextLength(ctx context.Context, hc *http.Client, root, model string) int {
	if hc == nil {
		hc = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(ctx, OllamaShowTimeout)
	defer cancel()
	body, _ := json.Marshal(map[string]string{"model": model})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, root+"/api/show", bytes.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0
	}
	var show struct {
		ModelInfo map[string]json.RawMessage `json:"model_info"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&show) != nil {
		return 0
	}
	var arch string
	if json.Unmarshal(show.ModelInfo["general.architecture"], &arch) != nil || arch == "" {
		return 0
	}
	var n int
	if json.Unmarshal(show.ModelInfo[arch+".context_length"], &n) != nil || n < 0 {
		return 0
	}
	return n
}

// OllamaShowTimeout bounds the /api/show look-up. It reads a file header on
// the server, which can take a moment the first time.
const OllamaShowTimeout = 5 * time.Second

// probeOllama lists the server's models with GET /api/tags, the cheapest
// call that proves an Ollama server (not just any HTTP server) is there.
func probeOllama(ctx context.Context, hc *http.Client, root string) ([]string, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(ctx, OllamaProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, root+"/api/tags", nil)
	if err != nil {
		return nil, fmt.Errorf("probing %s: %w", root, err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %w", errOllamaUnreachable, root, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%w at %s: reading /api/tags: %w", errOllamaUnreachable, root, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w at %s: GET /api/tags answered HTTP %d", errOllamaUnreachable, root, resp.StatusCode)
	}
	var tags struct {
		Models []struct {
			Name  string `json:"name"`
			Model string `json:"model"`
		} `json:"models"`
	}
	if err := json.Unmarshal(body, &tags); err != nil {
		return nil, fmt.Errorf("%w at %s: /api/tags is not Ollama's model list: %w", errOllamaUnreachable, root, err)
	}
	names := make([]string, 0, len(tags.Models))
	for _, m := range tags.Models {
		if n := first(m.Name, m.Model); n != "" {
			names = append(names, n)
		}
	}
	return names, nil
}

// OllamaURL turns an OLLAMA_HOST value into the server's root URL, the way
// Ollama's own client reads it: "host", "host:port", ":port" or a URL; the
// port defaults to 11434 without a scheme and to 80 or 443 with one. A
// wildcard listen address (0.0.0.0, ::) is dialled as loopback, since a
// server started with OLLAMA_HOST=0.0.0.0 is reachable there.
func OllamaURL(host string) (string, error) {
	s := strings.TrimSpace(host)
	if s == "" {
		s = DefaultOllamaHost
	}
	shown := llm.RedactURL(s)
	if strings.ContainsAny(s, "?#") {
		return "", fmt.Errorf("OLLAMA_HOST %q: a query string or fragment is not supported", shown)
	}
	if strings.Contains(s, "@") {
		return "", fmt.Errorf("OLLAMA_HOST %q: credentials in the address are not supported", shown)
	}
	scheme, rest, ok := strings.Cut(s, "://")
	port := "11434"
	switch {
	case !ok:
		scheme, rest = "http", s
	case strings.EqualFold(scheme, "http"):
		scheme, port = "http", "80"
	case strings.EqualFold(scheme, "https"):
		scheme, port = "https", "443"
	default:
		return "", fmt.Errorf("OLLAMA_HOST %q: scheme must be http or https", shown)
	}
	hostport, path, _ := strings.Cut(rest, "/")
	h, p, err := net.SplitHostPort(hostport)
	if err != nil {
		// No port given: the whole thing is the host.
		h, p = strings.Trim(hostport, "[]"), port
	}
	if h == "" || h == "0.0.0.0" || h == "::" {
		h = "127.0.0.1"
	}
	if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("OLLAMA_HOST %q: invalid port %q", shown, p)
	}
	if strings.ContainsAny(h, " /?#@") {
		return "", fmt.Errorf("OLLAMA_HOST %q: invalid host %q", shown, h)
	}
	u := scheme + "://" + net.JoinHostPort(h, p)
	if path = strings.Trim(path, "/"); path != "" {
		u += "/" + path
	}
	return u, nil
}

// normalizeURL checks a base URL and drops its trailing slash, so that
// "http://x/v1/" and "http://x/v1" reach the same endpoints. The query string
// is returned apart, to be added to every request (see withQuery). Messages
// show the URL masked, also when it does not parse.
func normalizeURL(raw string) (string, url.Values, error) {
	shown := llm.RedactURL(raw)
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", nil, fmt.Errorf("invalid base URL %q: want http(s)://host[:port][/path]", shown)
	}
	if u.User != nil {
		return "", nil, fmt.Errorf("invalid base URL %q: credentials belong in the API key variable, not the URL", shown)
	}
	if u.Fragment != "" || strings.HasSuffix(raw, "#") {
		return "", nil, fmt.Errorf("invalid base URL %q: a fragment is never sent to a server", shown)
	}
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", nil, fmt.Errorf("invalid base URL %q: the query string is malformed", shown)
	}
	u.RawQuery, u.ForceQuery = "", false
	return strings.TrimRight(u.String(), "/"), query, nil
}

func queryString(q url.Values) string {
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

func first(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
