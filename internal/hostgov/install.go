package hostgov

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/baton-dev/baton/history"
	"github.com/baton-dev/baton/internal/atomicfile"
	"github.com/baton-dev/baton/internal/batondir"
)

// Scopes of an install.
const (
	ScopeProject = "project"
	ScopeUser    = "user"
)

// hookTimeout is the time limit, in seconds, baton's entries give the
// host; a hook gives up before it (DefaultTimeout).
const hookTimeout = 30

// Install says where and how baton's hooks go.
type Install struct {
	Host  string // HostClaudeCode or HostCodex
	Scope string // ScopeProject or ScopeUser
	// Project is the project folder (project scope, and where the backup
	// of a project install is kept); Home the user's home folder.
	Project string
	Home    string
	// Command is how the hooks call baton: "baton" (found on PATH) by
	// default, or an absolute path.
	Command string
	// Flags of `baton hook`: zero values are left out.
	Threshold float64
	Window    int
	Ledger    string
	Strict    bool
}

// hostEvents are the events baton answers on each host, and the matcher
// it installs them with.
var hostEvents = map[string][]struct{ event, matcher string }{
	HostClaudeCode: {
		{EventPreCompact, ""}, {EventSessionStart, "compact|resume|clear"}, {EventUserPromptSubmit, ""},
		{EventPostToolUse, ""}, {EventSubagentStop, ""},
	},
	HostCodex: {
		{EventPreCompact, ""}, {EventPostCompact, ""}, {EventSessionStart, "compact|resume|clear"}, {EventUserPromptSubmit, ""},
	},
}

// SettingsPath is the file baton's entries go in: Claude Code's
// settings.json, or Codex's hooks.json, of the project or the user.
func (in Install) SettingsPath() (string, error) {
	base := in.Project
	if in.Scope == ScopeUser {
		base = in.Home
	}
	if base == "" {
		return "", fmt.Errorf("no folder for the %s scope", in.Scope)
	}
	switch in.Host {
	case HostClaudeCode:
		return filepath.Join(base, ".claude", "settings.json"), nil
	case HostCodex:
		return filepath.Join(base, ".codex", "hooks.json"), nil
	}
	return "", fmt.Errorf("unknown host %q; baton installs into %s or %s", in.Host, HostClaudeCode, HostCodex)
}

// recordPath is where the install keeps the settings' original bytes:
// the project's .baton for a project install, baton's data folder for a
// user one.
func (in Install) recordPath() (string, error) {
	dir := batondir.At(in.Project).Hooks()
	if in.Scope == ScopeUser {
		h, err := history.Home()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(h, "hooks")
	}
	return filepath.Join(dir, in.Host+"-"+in.Scope+".json"), nil
}

// installRecord is what uninstall needs to restore the settings byte for
// byte.
type installRecord struct {
	Settings  string `json:"settings"`
	Existed   bool   `json:"existed"`
	Original  []byte `json:"original"`
	Installed string `json:"installed_sha256"`
}

func (in Install) command() string { return cmpOr(in.Command, "baton") }

func (in Install) hookCommand(event string) string {
	args := []string{quoteArg(in.command()), "hook", event}
	if in.Host != HostClaudeCode {
		args = append(args, "--host", in.Host)
	}
	if in.Threshold > 0 && in.Threshold != DefaultThreshold {
		args = append(args, "--threshold", strconv.FormatFloat(in.Threshold, 'f', -1, 64))
	}
	if in.Window > 0 {
		args = append(args, "--window", strconv.Itoa(in.Window))
	}
	if in.Ledger != "" {
		args = append(args, "--ledger", quoteArg(in.Ledger))
	}
	if in.Strict {
		args = append(args, "--strict")
	}
	return strings.Join(args, " ")
}

func (in Install) statusCommand() string {
	args := []string{quoteArg(in.command()), "statusline"}
	if in.Threshold > 0 && in.Threshold != DefaultThreshold {
		args = append(args, "--threshold", strconv.FormatFloat(in.Threshold, 'f', -1, 64))
	}
	if in.Window > 0 {
		args = append(args, "--window", strconv.Itoa(in.Window))
	}
	if in.Ledger != "" {
		args = append(args, "--ledger", quoteArg(in.Ledger))
	}
	return strings.Join(args, " ")
}

// quoteArg quotes a word for the shell the hosts run hook commands with.
func quoteArg(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isBatonCommand reports whether a hook or status line command is one
// baton installs: its program is baton (by name or path) and its first
// argument hook or statusline.
func isBatonCommand(cmd string) bool {
	prog, rest := splitProgram(cmd)
	f := strings.Fields(rest)
	if len(f) < 1 || (f[0] != "hook" && f[0] != "statusline") {
		return false
	}
	return strings.TrimSuffix(filepath.Base(prog), ".exe") == "baton"
}

// splitProgram splits a command line into its program, unquoted as
// quoteArg quotes it, and the rest.
func splitProgram(cmd string) (string, string) {
	cmd = strings.TrimSpace(cmd)
	if strings.HasPrefix(cmd, "'") {
		var b strings.Builder
		for i := 1; i < len(cmd); i++ {
			switch {
			case strings.HasPrefix(cmd[i:], `'\''`):
				b.WriteByte('\'')
				i += 3
			case cmd[i] == '\'':
				return b.String(), cmd[i+1:]
			default:
				b.WriteByte(cmd[i])
			}
		}
		return b.String(), ""
	}
	prog, rest, _ := strings.Cut(cmd, " ")
	return strings.Trim(prog, `"`), rest
}

// ReadSettings reads a settings file; a missing one reads as absent.
func readSettings(path string) ([]byte, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return data, true, nil
}

// Apply installs baton's hooks: its entries are merged into the host's
// settings beside the user's own, and the original bytes are kept so that
// Remove can restore them exactly. It returns the settings path.
func Apply(in Install) (string, error) {
	path, err := in.SettingsPath()
	if err != nil {
		return "", err
	}
	data, existed, err := readSettings(path)
	if err != nil {
		return "", fmt.Errorf("settings %s: %w", path, err)
	}
	src := data
	if !existed || len(bytes.TrimSpace(data)) == 0 {
		src = []byte("{}")
	}
	obj, err := parseObject(src)
	if err != nil {
		return "", fmt.Errorf("settings %s cannot be parsed (%v); baton changed nothing", path, err)
	}
	recPath, err := in.recordPath()
	if err != nil {
		return "", err
	}
	rec := installRecord{Settings: path, Existed: existed, Original: data}
	if old, err := readRecord(recPath); err == nil && old.Settings == path {
		rec = old // installing again: the original is what was there first
	}
	if err := removeEntries(obj); err != nil {
		return "", fmt.Errorf("settings %s: %w; baton changed nothing", path, err)
	}
	if err := in.addEntries(obj); err != nil {
		return "", fmt.Errorf("settings %s: %w; baton changed nothing", path, err)
	}
	out, err := obj.marshal()
	if err != nil {
		return "", fmt.Errorf("settings %s: %w", path, err)
	}
	out = append(out, '\n')
	sum := sha256.Sum256(out)
	rec.Installed = hex.EncodeToString(sum[:])
	if err := writeRecord(recPath, rec, in.Scope == ScopeProject); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("settings %s: %w", path, err)
	}
	if err := atomicfile.Write(path, out, 0o644); err != nil {
		return "", fmt.Errorf("settings %s: %w", path, err)
	}
	return path, nil
}

// Remove uninstalls baton's hooks. Settings unchanged since the install
// get their original bytes back; settings the user changed since keep
// those changes and lose only baton's entries. It returns the settings
// path and whether the original bytes were restored.
func Remove(in Install) (string, bool, error) {
	path, err := in.SettingsPath()
	if err != nil {
		return "", false, err
	}
	recPath, err := in.recordPath()
	if err != nil {
		return "", false, err
	}
	data, existed, err := readSettings(path)
	if err != nil {
		return "", false, fmt.Errorf("settings %s: %w", path, err)
	}
	rec, rerr := readRecord(recPath)
	sum := sha256.Sum256(data)
	if rerr == nil && rec.Settings == path && existed && hex.EncodeToString(sum[:]) == rec.Installed {
		if rec.Existed {
			err = atomicfile.Write(path, rec.Original, 0o644)
		} else {
			err = os.Remove(path)
		}
		if err != nil {
			return "", false, fmt.Errorf("settings %s: %w", path, err)
		}
		return path, true, os.Remove(recPath)
	}
	if !existed {
		_ = os.Remove(recPath)
		return path, false, nil
	}
	obj, err := parseObject(data)
	if err != nil {
		return "", false, fmt.Errorf("settings %s cannot be parsed (%v); baton changed nothing", path, err)
	}
	if err := removeEntries(obj); err != nil {
		return "", false, fmt.Errorf("settings %s: %w; baton changed nothing", path, err)
	}
	out, err := obj.marshal()
	if err != nil {
		return "", false, fmt.Errorf("settings %s: %w", path, err)
	}
	if err := atomicfile.Write(path, append(out, '\n'), 0o644); err != nil {
		return "", false, fmt.Errorf("settings %s: %w", path, err)
	}
	if rerr == nil {
		_ = os.Remove(recPath)
	}
	return path, false, nil
}

func readRecord(path string) (installRecord, error) {
	var r installRecord
	data, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	return r, json.Unmarshal(data, &r)
}

func writeRecord(path string, r installRecord, inProject bool) error {
	dir := filepath.Dir(path)
	if inProject {
		if err := batondir.Ensure(filepath.Dir(dir)); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("install record %s: %w", path, err)
	}
	data, _ := json.MarshalIndent(r, "", "  ")
	return atomicfile.Write(path, data, 0o600)
}

type hookEntry struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitempty"`
}

type hookGroup struct {
	Matcher string      `json:"matcher,omitempty"`
	Hooks   []hookEntry `json:"hooks"`
}

// addEntries appends one group per event to the settings' hooks, after
// the user's, and the status line when the user has none.
func (in Install) addEntries(obj *object) error {
	hooks := &object{vals: map[string]json.RawMessage{}}
	if raw, ok := obj.get("hooks"); ok {
		h, err := parseObject(raw)
		if err != nil {
			return fmt.Errorf("its hooks are not an object: %v", err)
		}
		hooks = h
	}
	for _, ev := range hostEvents[in.Host] {
		raw, _ := hooks.get(ev.event)
		groups, err := rawArray(raw)
		if err != nil {
			return fmt.Errorf("hooks.%s is %v", ev.event, err)
		}
		g, _ := json.Marshal(hookGroup{Matcher: ev.matcher, Hooks: []hookEntry{{Type: "command", Command: in.hookCommand(ev.event), Timeout: hookTimeout}}})
		hooks.set(ev.event, joinArray(append(groups, g)))
	}
	hb, err := hooks.marshal()
	if err != nil {
		return err
	}
	obj.set("hooks", hb)
	if _, ok := obj.get("statusLine"); !ok && in.Host == HostClaudeCode {
		sl, _ := json.Marshal(hookEntry{Type: "command", Command: in.statusCommand()})
		obj.set("statusLine", sl)
	}
	return nil
}

// removeEntries takes baton's commands out of the settings, and the
// groups, event lists and hooks object they leave empty.
func removeEntries(obj *object) error {
	if raw, ok := obj.get("statusLine"); ok {
		var sl struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(raw, &sl) == nil && isBatonCommand(sl.Command) {
			obj.del("statusLine")
		}
	}
	raw, ok := obj.get("hooks")
	if !ok {
		return nil
	}
	hooks, err := parseObject(raw)
	if err != nil {
		return fmt.Errorf("its hooks are not an object: %v", err)
	}
	for _, ev := range append([]string(nil), hooks.keys...) {
		groups, err := rawArray(hooks.vals[ev])
		if err != nil {
			continue // not baton's to judge
		}
		var keep []json.RawMessage
		changed := false
		for _, g := range groups {
			ng, drop, ch := withoutBaton(g)
			changed = changed || ch
			if !drop {
				keep = append(keep, ng)
			}
		}
		switch {
		case !changed:
		case len(keep) == 0:
			hooks.del(ev)
		default:
			hooks.set(ev, joinArray(keep))
		}
	}
	if len(hooks.keys) == 0 {
		obj.del("hooks")
		return nil
	}
	hb, err := hooks.marshal()
	if err != nil {
		return err
	}
	obj.set("hooks", hb)
	return nil
}

// withoutBaton returns a matcher group without baton's commands, whether
// nothing is left of it, and whether it changed.
func withoutBaton(g json.RawMessage) (json.RawMessage, bool, bool) {
	obj, err := parseObject(g)
	if err != nil {
		return g, false, false
	}
	raw, ok := obj.get("hooks")
	if !ok {
		return g, false, false
	}
	list, err := rawArray(raw)
	if err != nil {
		return g, false, false
	}
	var keep []json.RawMessage
	for _, h := range list {
		var e hookEntry
		if json.Unmarshal(h, &e) == nil && isBatonCommand(e.Command) {
			continue
		}
		keep = append(keep, h)
	}
	if len(keep) == len(list) {
		return g, false, false
	}
	if len(keep) == 0 {
		return nil, true, true
	}
	obj.set("hooks", joinArray(keep))
	out, err := obj.marshal()
	if err != nil {
		return g, false, false
	}
	return out, false, true
}

// Installed is what `baton hooks status` reports of one settings file.
type Installed struct {
	Host, Scope, Settings string
	// Events are the events baton's entries answer there.
	Events []string
	// StatusLine is true when the status line is baton's.
	StatusLine bool
	// Command is the program the entries call, and OnPath whether it is
	// found (on PATH, or as the absolute path it is).
	Command string
	OnPath  bool
	// Err is a settings file that could not be read.
	Err error
}

// Status reports, for each host and scope, what baton has installed.
func Status(project, home string) []Installed {
	var out []Installed
	for _, host := range []string{HostClaudeCode, HostCodex} {
		for _, scope := range []string{ScopeProject, ScopeUser} {
			in := Install{Host: host, Scope: scope, Project: project, Home: home}
			path, err := in.SettingsPath()
			if err != nil {
				continue
			}
			st := Installed{Host: host, Scope: scope, Settings: path}
			data, existed, err := readSettings(path)
			if err != nil || !existed {
				st.Err = err
				out = append(out, st)
				continue
			}
			st.Err = st.scan(data)
			out = append(out, st)
		}
	}
	return out
}

func (st *Installed) scan(data []byte) error {
	var s struct {
		Hooks      map[string][]hookGroup `json:"hooks"`
		StatusLine *hookEntry             `json:"statusLine"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("cannot be parsed: %v", err)
	}
	note := func(cmd string) {
		if st.Command == "" {
			st.Command, _ = splitProgram(cmd)
			_, err := exec.LookPath(st.Command)
			st.OnPath = err == nil
		}
	}
	for ev, groups := range s.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				if isBatonCommand(h.Command) {
					st.Events = append(st.Events, ev)
					note(h.Command)
				}
			}
		}
	}
	if s.StatusLine != nil && isBatonCommand(s.StatusLine.Command) {
		st.StatusLine = true
		note(s.StatusLine.Command)
	}
	slices.Sort(st.Events)
	return nil
}
