package pricing

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"

	"github.com/baton-dev/baton/internal/yamlsafe"
)

// EnvFile names the environment variable that points at a prices file when
// no --prices flag is given.
const EnvFile = "BATON_PRICES"

// ErrPrices is wrapped by every error about a prices file.
var ErrPrices = errors.New("prices file")

// file is the prices file: YAML (or JSON, which is YAML too), in US dollars
// per million tokens:
//
//	models:
//	  my-gateway-model: {input: 0.5, output: 1.5, cache_read: 0.05, cache_write: 0}
//	  gpt-4o:           {input: 2.5, output: 10, cache_read: 1.25}
//
// An entry replaces the built-in price of that name or adds a new one; a
// field left out is 0. Names match as in Lookup.
type file struct {
	Models map[string]Price `yaml:"models"`
}

// Load returns the built-in table corrected by the prices file at path. An
// empty path gives the built-in table as it is.
func Load(path string) (*Table, error) {
	t := Builtin()
	if path == "" {
		return t, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPrices, err)
	}
	var f file
	if err := yamlsafe.Unmarshal(data, &f, yaml.DisallowUnknownField()); err != nil {
		return nil, fmt.Errorf("%w %s: %s", ErrPrices, path, strings.Join(strings.Fields(err.Error()), " "))
	}
	if len(f.Models) == 0 {
		return nil, fmt.Errorf("%w %s: no models: key with prices under it", ErrPrices, path)
	}
	for name, p := range f.Models {
		for field, v := range map[string]float64{"input": p.Input, "output": p.Output, "cache_read": p.CacheRead, "cache_write": p.CacheWrite} {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w %s: model %q: %s must be a price of 0 or more dollars per million tokens", ErrPrices, path, name, field)
			}
		}
		t.prices[strings.ToLower(strings.TrimSpace(name))] = p
	}
	t.source = fmt.Sprintf("%s, corrected by %s", t.source, path)
	return t, nil
}

// ConfigFile is the prices file baton reads when neither --prices nor
// $BATON_PRICES names one: prices.yaml in baton's folder of the user's
// config folder ($XDG_CONFIG_HOME/baton or ~/.config/baton on Linux,
// ~/Library/Application Support/baton on macOS, %AppData%\baton on
// Windows). "" when the system has no config folder.
func ConfigFile() string {
	dir, err := os.UserConfigDir()
	if err != nil || dir == "" {
		return ""
	}
	return filepath.Join(dir, "baton", "prices.yaml")
}

// DefaultPath is the prices file to use when no flag names one:
// $BATON_PRICES, else ConfigFile when that file exists, else "" (the
// built-in table as it is).
func DefaultPath(getenv func(string) string) string {
	if p := getenv(EnvFile); p != "" {
		return p
	}
	if p := ConfigFile(); p != "" {
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// LoadDefault is Load of DefaultPath: what the run history and the reports
// price with, so their dollars agree with the commands' own.
func LoadDefault(getenv func(string) string) (*Table, error) {
	return Load(DefaultPath(getenv))
}

// Default is the table for what has no flag of its own (the run history's
// rows, the reports, the end of a workflow run): the built-in list prices
// corrected by the file DefaultPath names, read once. A file that does not
// load leaves the built-in table: indexing must never fail a run, and the
// commands that take --prices report what is wrong with the file.
var Default = sync.OnceValue(func() *Table {
	t, err := LoadDefault(os.Getenv)
	if err != nil {
		return Builtin()
	}
	return t
})
