package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --prices "" prices with the built-in list alone, as its help says the
// default is only a default: a broken $BATON_PRICES is then not read.
func TestAskEmptyPricesFlagIsTheBuiltinList(t *testing.T) {
	isolateEnv(t)
	bad := filepath.Join(t.TempDir(), "prices.yaml")
	if err := os.WriteFile(bad, []byte("models: [not a map"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BATON_PRICES", bad)
	args := []string{"ask", "--doc", exampleDoc, "--dry-run", "--no-save", "--json"}
	if code, _, stderr := runBaton(t, "", append(args, "What caused the outage?")...); code == 0 || !strings.Contains(stderr, "prices") {
		t.Fatalf("with $BATON_PRICES broken and no --prices: exit %d, stderr %q; want the prices file's error", code, stderr)
	}
	if code, _, stderr := runBaton(t, "", append(args, "--prices", "", "What caused the outage?")...); code != 0 {
		t.Fatalf("--prices \"\": exit %d, stderr %q; want the built-in list", code, stderr)
	}
}
