package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBenchCommandWritesReport(t *testing.T) {
	out := filepath.Join(t.TempDir(), "BENCH.md")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"bench", "--only", "pointers", "--max-docs", "1", "--out", out}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, stdout.Bytes()) {
		t.Errorf("the file differs from what was printed")
	}
	for _, want := range []string{"# Benchmarks", "Machine: ", "go run ./cmd/baton bench --only pointers --max-docs 1", "## 2. Pointer robustness", "| exact |"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestBenchCommandRejectsUnknownBenchmark(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"bench", "--only", "nope", "--out", "-"}, strings.NewReader(""), &stdout, &stderr); code != exitUsage {
		t.Fatalf("exit %d, want %d; stderr %s", code, exitUsage, stderr.String())
	}
}
