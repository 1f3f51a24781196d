package docstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/baton-dev/baton/engine/docstore"
	"github.com/baton-dev/baton/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// A document put twice is stored once, and read back whole; a hash never
// put is ErrNotFound; a second store opening the same database finds it.
func TestPutOnceAndGet(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Database(t)
	s, err := docstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	content := []byte("# Report\n\nline two\x00with a zero byte\n")
	for range 2 {
		if err := s.Put(ctx, "h1", content); err != nil {
			t.Fatal(err)
		}
	}
	// The first content stays: a hash names one content.
	if err := s.Put(ctx, "h1", []byte("other")); err != nil {
		t.Fatal(err)
	}
	s2, err := docstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.Get(ctx, "h1")
	if err != nil || string(got) != string(content) {
		t.Fatalf("Get = %q, %v; want %q", got, err, content)
	}
	if _, err := s2.Get(ctx, "missing"); !errors.Is(err, docstore.ErrNotFound) {
		t.Errorf("Get of a missing hash: %v, want ErrNotFound", err)
	}
}
