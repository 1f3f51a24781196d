package localengine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/engine"
	"github.com/baton-dev/baton/engine/enginetest"
	"github.com/baton-dev/baton/internal/localengine"
)

func open(t *testing.T, dir string, tasks engine.Tasks, concurrency int) engine.Engine {
	e, err := localengine.New(tasks, localengine.Options{Dir: dir, Concurrency: concurrency})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func TestContractOnDisk(t *testing.T) {
	enginetest.Run(t, enginetest.Backend{
		NewStore: func(t *testing.T) string { return t.TempDir() },
		Open:     open,
	})
}

func TestContractInMemory(t *testing.T) {
	enginetest.Run(t, enginetest.Backend{
		NewStore: func(t *testing.T) string { return "" },
		Open:     open,
		Volatile: true,
	})
}

// A crash while a line is written leaves it torn: it is cut off, and the
// steps before it are still answered.
func TestTornLastLineIsCutAndWholeBadLineRefused(t *testing.T) {
	dir := t.TempDir()
	runs := 0
	tasks := engine.Tasks{"t": func(ctx context.Context, _ []byte) ([]byte, error) {
		return engine.Step(ctx, "k", func(context.Context) ([]byte, error) { runs++; return []byte("v"), nil })
	}}
	e := open(t, dir, tasks, 1)
	if _, err := e.Run(context.Background(), engine.Item{ID: "a", Task: "t"}); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("journals: %v", files)
	}
	b, _ := os.ReadFile(files[0])
	lines := strings.SplitAfter(string(b), "\n")
	// Keep the step, tear the done line.
	os.WriteFile(files[0], []byte(lines[0]+lines[1][:5]), 0o600)
	out, err := e.Run(context.Background(), engine.Item{ID: "a", Task: "t"})
	if err != nil || string(out) != "v" || runs != 1 {
		t.Fatalf("after a torn line: %q, %v, step ran %d times", out, err, runs)
	}
	os.WriteFile(files[0], []byte("not json\n"+lines[0]), 0o600)
	if _, err := e.Run(context.Background(), engine.Item{ID: "a", Task: "t"}); err == nil || !strings.Contains(err.Error(), "line at byte 0") {
		t.Fatalf("a whole line that is not JSON: %v, want a refusal", err)
	}
}
