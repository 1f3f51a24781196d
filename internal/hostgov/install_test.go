package hostgov

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A user's settings in a formatting of their own: tabs, keys out of
// alphabetical order, a hook of theirs, a trailing newline missing.
const ownSettings = "{\n\t\"model\": \"opus\",\n\t\"hooks\": {\"PreCompact\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"./save.sh\"}]}]},\n\t\"env\": {\"B\": \"2\", \"A\": \"1\"}\n}"

func installIn(t *testing.T, host string) (Install, string) {
	t.Helper()
	t.Setenv("BATON_HOME", t.TempDir())
	in := Install{Host: host, Scope: ScopeProject, Project: t.TempDir(), Home: t.TempDir()}
	path, err := in.SettingsPath()
	if err != nil {
		t.Fatal(err)
	}
	return in, path
}

func TestInstallMergesAndUninstallRestores(t *testing.T) {
	in, path := installIn(t, HostClaudeCode)
	writeFile(t, path, ownSettings)
	in.Threshold, in.Window = 0.6, 100_000
	if _, err := Apply(in); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	obj, err := parseObject(data)
	if err != nil {
		t.Fatalf("installed settings do not parse: %v\n%s", err, data)
	}
	if strings.Join(obj.keys, ",") != "model,hooks,env,statusLine" {
		t.Errorf("keys %v: the user's order is lost", obj.keys)
	}
	var s struct {
		Hooks map[string][]hookGroup `json:"hooks"`
		Env   map[string]string      `json:"env"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	pre := s.Hooks["PreCompact"]
	if len(pre) != 2 || pre[0].Hooks[0].Command != "./save.sh" || pre[1].Hooks[0].Command != "baton hook PreCompact --threshold 0.6 --window 100000" {
		t.Errorf("PreCompact groups %+v: the user's hook must stay first, baton's after it", pre)
	}
	if s.Env["B"] != "2" || len(s.Hooks) != 5 {
		t.Errorf("settings %s", data)
	}
	// Installing again changes the flags without stacking entries.
	in.Threshold = 0.7
	if _, err := Apply(in); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(path)
	if n := strings.Count(string(data), "baton hook PreCompact"); n != 1 {
		t.Errorf("%d PreCompact entries after installing twice", n)
	}
	if st := Status(in.Project, in.Home); len(st[0].Events) != 5 || !st[0].StatusLine {
		t.Errorf("status %+v", st[0])
	}
	if _, restored, err := Remove(in); err != nil || !restored {
		t.Fatalf("uninstall: restored %v, %v", restored, err)
	}
	if got, _ := os.ReadFile(path); string(got) != ownSettings {
		t.Errorf("uninstall did not restore the bytes:\n%q\nwant\n%q", got, ownSettings)
	}
}

func TestUninstallKeepsTheUsersLaterEdits(t *testing.T) {
	in, path := installIn(t, HostClaudeCode)
	writeFile(t, path, ownSettings)
	if _, err := Apply(in); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	edited := strings.Replace(string(data), `"model": "opus"`, `"model": "sonnet"`, 1)
	writeFile(t, path, edited)
	if _, restored, err := Remove(in); err != nil || restored {
		t.Fatalf("uninstall after an edit: restored %v, %v", restored, err)
	}
	got, _ := os.ReadFile(path)
	if strings.Contains(string(got), "baton") || !strings.Contains(string(got), `"sonnet"`) || !strings.Contains(string(got), "./save.sh") {
		t.Errorf("after uninstall:\n%s", got)
	}
}

func TestInstallWithoutSettingsAndUninstall(t *testing.T) {
	in, path := installIn(t, HostClaudeCode)
	if _, err := Apply(in); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Remove(in); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("uninstall left a settings file baton created: %v", err)
	}
}

func TestInstallRefusesUnparsableSettings(t *testing.T) {
	for _, bad := range []string{"{\"hooks\": ", "// comment\n{}", "[]", `{"hooks": []}`, `{"hooks": {"PreCompact": {}}}`} {
		in, path := installIn(t, HostClaudeCode)
		writeFile(t, path, bad)
		_, err := Apply(in)
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("settings %q: %v, want a one-line refusal", bad, err)
		}
		if got, _ := os.ReadFile(path); string(got) != bad {
			t.Errorf("settings %q changed to %q", bad, got)
		}
	}
}

func TestInstallCodex(t *testing.T) {
	in, path := installIn(t, HostCodex)
	if filepath.Base(path) != "hooks.json" || filepath.Base(filepath.Dir(path)) != ".codex" {
		t.Fatalf("codex settings at %s", path)
	}
	if _, err := Apply(in); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	for _, want := range []string{"baton hook PreCompact --host codex", "baton hook PostCompact --host codex", "baton hook SessionStart --host codex", `"compact|resume|clear"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("codex hooks lack %q:\n%s", want, data)
		}
	}
	if strings.Contains(string(data), "statusLine") {
		t.Errorf("codex has no status line command:\n%s", data)
	}
}

func TestIsBatonCommand(t *testing.T) {
	for cmd, want := range map[string]bool{
		"baton hook PreCompact": true, "/usr/local/bin/baton hook SessionStart --window 9": true,
		"'/opt/my tools/baton' statusline": true, "baton ask x": false, "./save.sh": false, "notbaton hook X": false,
	} {
		if isBatonCommand(cmd) != want {
			t.Errorf("isBatonCommand(%q) = %v", cmd, !want)
		}
	}
}

func TestInstallUserScope(t *testing.T) {
	t.Setenv("BATON_HOME", t.TempDir())
	in := Install{Host: HostClaudeCode, Scope: ScopeUser, Project: t.TempDir(), Home: t.TempDir()}
	path, _ := in.SettingsPath()
	if path != filepath.Join(in.Home, ".claude", "settings.json") {
		t.Fatalf("user settings at %s", path)
	}
	own := `{"statusLine": {"type": "command", "command": "my-status"}}`
	writeFile(t, path, own)
	if _, err := Apply(in); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "my-status") || strings.Contains(string(data), "baton statusline") {
		t.Errorf("the user's status line must stay theirs:\n%s", data)
	}
	if entries, _ := os.ReadDir(in.Project); len(entries) != 0 {
		t.Errorf("a user install wrote into the project: %v", entries)
	}
	if _, restored, err := Remove(in); err != nil || !restored {
		t.Fatalf("uninstall: %v %v", restored, err)
	}
	if got, _ := os.ReadFile(path); string(got) != own {
		t.Errorf("user settings not restored: %s", got)
	}
}
