package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm"
)

// Tool records and refusals go through the checksum chain like every
// other record: they read back whole, in order per key, and an edited one
// (a result changed to steer a resumed step) is refused.
func TestJournalToolRecordsChainAndReadBack(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "001-a.jsonl")
	gen := journalGenesis("run1", 1, "a")
	j, err := openJournal(p, "j", gen)
	if err != nil {
		t.Fatal(err)
	}
	next := "plan-change"
	key := toolKey("reqhash", 0, "call_1")
	for _, r := range []journalTool{
		{Result: llm.ToolResult{CallID: "call_1", Content: "wrote a.md (3 bytes)"}, Written: []string{"a.md"}, NextSkill: &next},
		{Result: llm.ToolResult{CallID: "call_1", Content: "second"}, Finished: true, Summary: "done", Calls: 2, Usage: llm.Usage{InputTokens: 7}},
	} {
		if err := j.recordTool(key, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.append(journalRecord{Kind: "refused", Hash: "h", Refused: "openai: HTTP 400: no"}); err != nil {
		t.Fatal(err)
	}
	j.close()

	j, err = openJournal(p, "j", gen)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	first, ok1 := j.recordedTool(key)
	second, ok2 := j.recordedTool(key)
	_, ok3 := j.recordedTool(key)
	if !ok1 || !ok2 || ok3 || first.Result.Content != "wrote a.md (3 bytes)" || first.NextSkill == nil || *first.NextSkill != next ||
		len(first.Written) != 1 || !second.Finished || second.Summary != "done" || second.Calls != 2 || second.Usage.InputTokens != 7 {
		t.Fatalf("read back %+v (%v), %+v (%v), a third: %v", first, ok1, second, ok2, ok3)
	}
	if j.refused["h"] != "openai: HTTP 400: no" {
		t.Errorf("refusal read back as %q", j.refused["h"])
	}
	if _, ok := j.recordedTool(toolKey("reqhash", 1, "call_1")); ok {
		t.Error("another index of the same response has a record")
	}
	j.close()

	data, _ := os.ReadFile(p)
	edited := strings.Replace(string(data), "wrote a.md", "wrote b.md", 1)
	q := filepath.Join(dir, "edited.jsonl")
	os.WriteFile(q, []byte(edited), 0o644)
	if _, err := openJournal(q, "j", gen); !errors.Is(err, ErrJournalChain) || !strings.Contains(err.Error(), "record 1 ") {
		t.Errorf("an edited tool record: %v", err)
	}
	// A tool record without its body is not a record.
	j, _ = openJournal(filepath.Join(dir, "bodyless.jsonl"), "j", gen)
	j.append(journalRecord{Kind: "tool", Hash: key})
	j.close()
	if _, err := openJournal(filepath.Join(dir, "bodyless.jsonl"), "j", gen); !errors.Is(err, ErrJournalChain) {
		t.Errorf("a tool record without its body: %v", err)
	}
}
