package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm"
)

// A journal written through append reads back whole; every line edited in
// any byte is refused with its record number.
func TestJournalChainRoundTripAndEdits(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "001-a.jsonl")
	gen := journalGenesis("run1", 1, "a")
	j, err := openJournal(p, "j", gen)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.recordStart(journalStart{System: "sys <&>", User: "u"}); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"one", "two"} {
		if err := j.append(journalRecord{Kind: "call", Hash: "h", Response: &llm.Response{Text: text}}); err != nil {
			t.Fatal(err)
		}
	}
	j.close()
	j, err = openJournal(p, "j", gen)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if j.start == nil || j.start.System != "sys <&>" || len(j.calls["h"]) != 2 {
		t.Fatalf("read back start %+v, calls %d", j.start, len(j.calls["h"]))
	}
	j.close()
	if _, err := openJournal(p, "j", journalGenesis("run1", 2, "a")); err == nil || !strings.Contains(err.Error(), "record 1 does not match") {
		t.Errorf("a journal opened as another step's: %v", err)
	}
	data, _ := os.ReadFile(p)
	lines := strings.SplitAfter(string(data), "\n")
	for i := range 3 {
		edited := append([]string{}, lines...)
		edited[i] = strings.Replace(edited[i], `"kind":"`, `"kind": "`, 1)
		q := filepath.Join(dir, "edited.jsonl")
		os.WriteFile(q, []byte(strings.Join(edited, "")), 0o644)
		_, err := openJournal(q, "j", gen)
		if !errors.Is(err, ErrJournalChain) || !strings.Contains(err.Error(), "j: record "+string(rune('1'+i))+" does not match") {
			t.Errorf("line %d edited: %v", i+1, err)
		}
	}
}

// Whatever the bytes of a journal, opening it returns an error or a
// journal, never a panic.
func FuzzOpenJournal(f *testing.F) {
	f.Add([]byte(`{"prev":"x","sum":"y","rec":{"kind":"start"}}` + "\n"))
	f.Add([]byte("{\n{\"prev\""))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "j.jsonl")
		os.WriteFile(p, data, 0o644)
		if j, err := openJournal(p, "j", "g"); err == nil {
			j.close()
		}
	})
}
