package mcpserver_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/mcpserver"
)

// needGit returns the git program, failing under CI=true when it is
// missing and skipping loudly elsewhere.
func needGit(t *testing.T) string {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("git is needed for this test and is not installed: %v", err)
		}
		t.Skipf("SKIPPED: git is not installed (%v); under CI=true this test fails instead", err)
	}
	return git
}

// The original attack: a ledger entry appended to .git/config whose
// next step sets core.fsmonitor, so that the user's next git status runs
// a command. The call is refused, the config keeps its bytes, and a real
// git status in the repository creates no marker.
func TestLedgerAppendToGitConfigRunsNothing(t *testing.T) {
	git := needGit(t)
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_CONFIG_GLOBAL="+os.DevNull)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Logf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("init", "-q")
	config := filepath.Join(dir, ".git", "config")
	before, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	cs := serve(t, mcpserver.Config{Root: dir, Version: "test"}, nil)
	for _, ledger := range []string{".git/config", ".GIT/config", "./.git//config", ".git./config"} {
		args := pathArgs["ledger_append"][0](ledger)
		args["next_step"] = "\n[core]\n\tfsmonitor = \"touch PWNED; false\"\n"
		res := call(t, cs, "ledger_append", args, nil)
		if text := resultText(res); !res.IsError || strings.Contains(text, "\n") {
			t.Errorf("ledger_append to %q: isError %v, text %q; want a one-line refusal", ledger, res.IsError, text)
		}
	}
	after, _ := os.ReadFile(config)
	if !bytes.Equal(before, after) {
		t.Errorf(".git/config changed:\n%s", after)
	}
	run("status")
	if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
		t.Fatal("git status ran the command the ledger entry put into .git/config")
	}
}
