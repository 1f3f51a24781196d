package orchestrate_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/engine"
	"github.com/baton-dev/baton/internal/localengine"
	"github.com/baton-dev/baton/internal/recordcmp"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

// memDocs is a document store in memory that counts what is put in it.
type memDocs struct {
	mu   sync.Mutex
	m    map[string][]byte
	puts int
}

func (d *memDocs) Put(_ context.Context, hash string, b []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.puts++
	if d.m == nil {
		d.m = map[string][]byte{}
	}
	d.m[hash] = append([]byte(nil), b...)
	return nil
}

func (d *memDocs) Get(_ context.Context, hash string) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b, ok := d.m[hash]
	if !ok {
		return nil, errors.New("no such document")
	}
	return b, nil
}

// comparable is a record as JSON with what may differ between two runs of
// the same ask left out: its ID and every time.
// diffRecords is the difference between two records, without what differs
// between any two runs of one ask.
func diffRecords(t *testing.T, a, b *orchestrate.Record) string {
	t.Helper()
	return cmp.Diff(comparable(t, a), comparable(t, b))
}

func comparable(t *testing.T, rec *orchestrate.Record) any {
	t.Helper()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	v, err := recordcmp.Comparable(b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// An ask whose sub-agent calls run as engine items records what the same
// ask run in process records, apart from times; the items carry the
// document's hash and pointers, not its text, and the document is stored
// once.
func TestAskThroughAnEngineRecordsTheSame(t *testing.T) {
	s := llmtest.NewServer(t, script(llmtest.Text(planJSON)))
	m := providers["openai"](t, s)
	want, err := orchestrate.Ask(context.Background(), config(m))
	if err != nil {
		t.Fatalf("Ask in process: %v", err)
	}
	docs := &memDocs{}
	var inputs [][]byte
	var mu sync.Mutex
	task := orchestrate.NewSubagentTask(m, docs)
	e, err := localengine.New(engine.Tasks{orchestrate.SubagentTask: func(ctx context.Context, in []byte) ([]byte, error) {
		mu.Lock()
		inputs = append(inputs, in)
		mu.Unlock()
		return task(ctx, in)
	}}, localengine.Options{Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cfg := config(m)
	cfg.Engine, cfg.Documents = e, docs
	got, err := orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Ask through the engine: %v", err)
	}
	if len(inputs) != 2 {
		t.Errorf("the engine ran %d sub-agent items, want 2", len(inputs))
	}
	for _, in := range inputs {
		if strings.Contains(string(in), "marker-revenue") || strings.Contains(string(in), "marker-costs") {
			t.Errorf("an item carries the document's text: %s", in)
		}
	}
	if docs.puts != 1 {
		t.Errorf("the document was stored %d times, want once", docs.puts)
	}
	if d := diffRecords(t, want, got); d != "" {
		t.Errorf("records differ (-in process +through the engine):\n%s", d)
	}
}
