package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/tokens"
)

// runBaton drives the real command tree and returns exit code, stdout, stderr.
func runBaton(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestTokensCommand(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.md")
	text := "# Title\n\nSome words to count, and a few more.\n"
	if err := os.WriteFile(a, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	want := tokens.Count(text)

	code, out, _ := runBaton(t, "more words on stdin", "tokens", "--json", a, "-")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var got struct {
		Files []struct {
			File   string
			Tokens int
		}
		Total int
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("bad JSON %q: %v", out, err)
	}
	if len(got.Files) != 2 || got.Files[0].Tokens != want {
		t.Fatalf("files = %+v, want first = %d tokens", got.Files, want)
	}
	if got.Total != want+tokens.Count("more words on stdin") {
		t.Fatalf("total = %d", got.Total)
	}

	code, _, errOut := runBaton(t, "", "tokens", filepath.Join(dir, "missing.md"))
	if code != exitError || !strings.Contains(errOut, "missing.md") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("missing file: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ := runBaton(t, "", "tokens"); code != exitUsage {
		t.Fatalf("no args: exit %d, want %d", code, exitUsage)
	}
	if code, _, _ := runBaton(t, "", "tokens", "--encoding", "nope", a); code != exitUsage {
		t.Fatalf("bad encoding: exit %d, want %d", code, exitUsage)
	}
}
