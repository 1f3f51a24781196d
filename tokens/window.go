package tokens

import (
	"sort"
	"strings"
)

// windows maps model name prefixes to context window sizes in tokens. The
// longest matching prefix wins, so "gpt-4o-mini" finds "gpt-4o" unless it has
// an entry of its own.
var windows = map[string]int{
	"claude-":         200_000,
	"claude-sonnet-4": 200_000,
	"claude-opus-4":   200_000,
	"claude-haiku-4":  200_000,
	"claude-3":        200_000,
	"gpt-4o":          128_000,
	"gpt-4.1":         1_047_576,
	"gpt-4-turbo":     128_000,
	"gpt-4":           8_192,
	"gpt-3.5-turbo":   16_385,
	"gpt-5":           400_000,
	"o1":              200_000,
	"o3":              200_000,
	"o4-mini":         200_000,
	"llama3":          8_192,
	"llama3.1":        128_000,
	"llama3.2":        128_000,
	"llama3.3":        128_000,
	"qwen2.5":         32_768,
	"qwen3":           40_960,
	"mistral":         32_768,
	"gemma2":          8_192,
	"gemma3":          128_000,
	"deepseek-r1":     128_000,
	"phi3":            128_000,
	"phi4":            16_384,
	"gpt-oss":         128_000,
}

// DefaultWindow is assumed for a model baton does not know. It is
// deliberately modest: over-estimating a window is what lets a context rot.
const DefaultWindow = 128_000

// Window returns the context window of model in tokens, and whether the model
// was known. An override > 0 always wins.
func Window(model string, override int) (int, bool) {
	if override > 0 {
		return override, true
	}
	m := strings.ToLower(model)
	// Ollama names carry a tag ("llama3.1:8b"); the family decides the window.
	if i := strings.IndexByte(m, ':'); i >= 0 {
		m = m[:i]
	}
	keys := make([]string, 0, len(windows))
	for k := range windows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	for _, k := range keys {
		if strings.HasPrefix(m, k) {
			return windows[k], true
		}
	}
	return DefaultWindow, false
}
