package ledger

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSymlinkedLedgerRefused: a specs/ledger.md that is a symlink, whether
// it leads out of the workspace or to a file beside it, is refused by every
// call. Append used to read the outside file through the link and replace
// the link with a regular file holding that content plus the entry, which a
// model could then read back.
func TestSymlinkedLedgerRefused(t *testing.T) {
	base := t.TempDir()
	specs := filepath.Join(base, "ws", "specs")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{specs, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(outside, "ledger.md")
	const secretText = "# outside\n\nSECRET outside the workspace\n"
	if err := os.WriteFile(secret, []byte(secretText), 0o644); err != nil {
		t.Fatal(err)
	}
	sibling := filepath.Join(specs, "real.md")
	if err := os.WriteFile(sibling, []byte("# real\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	targets := map[string]string{
		"absolute out":  secret,
		"relative out":  "../../outside/ledger.md",
		"dangling out":  filepath.Join(outside, "missing.md"),
		"inside folder": "real.md",
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(specs, "ledger.md")
			os.Remove(path)
			if err := os.Symlink(target, path); err != nil {
				t.Skip("symlinks unavailable:", err)
			}
			check := func(op string, err error) {
				t.Helper()
				if err == nil {
					t.Fatalf("%s through a symlinked ledger succeeded", op)
				}
				msg := err.Error()
				if want := "ledger " + path + " is a symlink; baton keeps its ledger as a regular file"; !strings.Contains(msg, want) {
					t.Errorf("%s error %q, want it to say %q", op, msg, want)
				}
				if strings.Contains(msg, "\n") || strings.Contains(msg, "SECRET") {
					t.Errorf("%s error %q spans lines or leaks the target", op, msg)
				}
			}
			check("Append", Append(path, fullEntry()))
			_, _, err := Read(path)
			check("Read", err)
			_, err = Latest(path)
			check("Latest", err)
			if got, err := os.Readlink(path); err != nil || got != target {
				t.Errorf("the link changed: now %q, %v", got, err)
			}
			if got, _ := os.ReadFile(secret); string(got) != secretText {
				t.Errorf("the outside file changed to %q", got)
			}
			if _, err := os.Lstat(filepath.Join(outside, "missing.md")); err == nil {
				t.Error("a file was created outside through the dangling link")
			}
			if got, _ := os.ReadFile(sibling); string(got) != "# real\n" {
				t.Errorf("the link's target beside it changed to %q", got)
			}
		})
	}
}
