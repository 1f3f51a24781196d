package runlog

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var ignorePos = cmpopts.IgnoreFields(Event{}, "Path", "Line")

func TestWriteReadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs", "r1", "events.jsonl")
	t0 := time.Date(2026, 11, 30, 6, 0, 0, 123, time.UTC)
	want := []Event{
		{Time: t0, Run: "r1", Type: RunStart, Phases: []string{"analysis", "implement"}, LedgerPath: "specs/ledger.md", WindowTokens: 200000, ThresholdTokens: 130000},
		{Time: t0, Run: "r1", Type: BoundaryEvaluation, Phase: "analysis", NextPhase: "implement", ProjectedTokens: 90000, ThresholdTokens: 130000, WindowTokens: 200000, Decision: DecisionContinue},
		{Time: t0, Run: "r1", Type: LedgerWritten, LedgerTime: t0.Truncate(time.Second), Complete: Bool(false), Missing: []string{"Artifacts"}},
		{Time: t0, Run: "r1", Type: Reset, Reason: ReasonThreshold, Mode: "fresh", LedgerTime: t0.Truncate(time.Second), ContextTokens: 131000, WindowTokens: 200000, ContextFraction: 0.655},
		{Time: t0, Run: "r1", Type: StepEnd, Skill: "plan", Step: "s1", InputHash: "sha256:ab", Usage: &Usage{InputTokens: 10, OutputTokens: 5, CacheReadTokens: 3}},
	}
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range want {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, problems, err := Read(path)
	if err != nil || len(problems) != 0 {
		t.Fatalf("Read: %v %v", err, problems)
	}
	if d := cmp.Diff(want, got, ignorePos); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
	if got[2].Line != 3 || got[2].Path != path {
		t.Errorf("position = %s:%d", got[2].Path, got[2].Line)
	}
	raw, _ := os.ReadFile(path)
	if !strings.Contains(string(raw), `"complete":false`) {
		t.Errorf("complete=false was not written: %s", raw)
	}
}

func TestWriteRejects(t *testing.T) {
	w, err := Open(filepath.Join(t.TempDir(), "e.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, e := range []Event{{Run: "r"}, {Type: RunStart}} {
		if err := w.Write(e); err == nil {
			t.Errorf("Write(%+v) succeeded", e)
		}
	}
	w.Close()
	if err := w.Write(Event{Run: "r", Type: RunEnd}); err == nil {
		t.Error("Write after Close succeeded")
	}
}

func TestReadProblems(t *testing.T) {
	tests := []struct {
		name       string
		data       string
		events     int
		wantLines  []int
		wantTorn   []bool
		lastEvLine int
	}{
		{"clean", `{"run":"r","type":"run_start"}` + "\n" + `{"run":"r","type":"run_end"}` + "\n", 2, nil, nil, 2},
		{"crlf and blank lines", `{"run":"r","type":"run_start"}` + "\r\n\r\n" + `{"run":"r","type":"run_end"}` + "\r\n", 2, nil, nil, 3},
		{"torn last line", `{"run":"r","type":"run_start"}` + "\n" + `{"run":"r","ty`, 1, []int{2}, []bool{true}, 1},
		{"whole last line without newline", `{"run":"r","type":"run_start"}` + "\n" + `{"run":"r","type":"run_end"}`, 2, nil, nil, 2},
		{"torn line in the middle, after a resume", `{"run":"r","type":"run_start","pha` + "\n" + `{"run":"r","type":"resume"}` + "\n", 1, []int{1}, []bool{true}, 2},
		{"bad middle line", `{"run":"r","type":"run_start"}` + "\nnot json\n" + `{"run":"r","type":"run_end"}` + "\n", 2, []int{2}, []bool{false}, 3},
		{"no type", `{"run":"r"}` + "\n", 0, []int{1}, []bool{false}, 0},
		{"wrong field type", `{"run":"r","type":"reset","tokens":"many"}` + "\n", 0, []int{1}, []bool{false}, 0},
		{"unknown keys and types survive", `{"run":"r","type":"custom","extra":1}` + "\n", 1, nil, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "e.jsonl")
			if err := os.WriteFile(path, []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			evs, ps, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != tt.events {
				t.Fatalf("%d events, want %d", len(evs), tt.events)
			}
			var lines []int
			var torn []bool
			for _, p := range ps {
				lines = append(lines, p.Line)
				torn = append(torn, p.Torn)
				if p.Msg == "" || strings.Contains(p.String(), "\n") {
					t.Errorf("problem %q is not one useful line", p.String())
				}
			}
			if d := cmp.Diff(tt.wantLines, lines); d != "" {
				t.Errorf("problem lines (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.wantTorn, torn); d != "" {
				t.Errorf("torn (-want +got):\n%s", d)
			}
			if tt.events > 0 && evs[len(evs)-1].Line != tt.lastEvLine {
				t.Errorf("last event line %d, want %d", evs[len(evs)-1].Line, tt.lastEvLine)
			}
		})
	}
}

func TestReadMissingFile(t *testing.T) {
	if _, _, err := Read(filepath.Join(t.TempDir(), "nope.jsonl")); !os.IsNotExist(unwrapAll(err)) {
		t.Fatalf("err = %v, want not-exist", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

// A writer reopening a log whose last line was torn by a kill must not glue
// its first event onto the torn fragment.
func TestOpenAfterTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "e.jsonl")
	if err := os.WriteFile(path, []byte(`{"run":"r","type":"run_start"}`+"\n"+`{"run":"r","ty`), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(Event{Run: "r", Type: Resume, From: FromLedger}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	evs, ps, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[1].Type != Resume || len(ps) != 1 || ps[0].Line != 2 || !ps[0].Torn {
		t.Fatalf("events %+v problems %+v", evs, ps)
	}
}

func TestConcurrentWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "e.jsonl")
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				if err := w.Write(Event{Run: "r", Type: ModelCall, Step: string(rune('a' + i))}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	w.Close()
	evs, ps, err := Read(path)
	if err != nil || len(ps) != 0 || len(evs) != 40 {
		t.Fatalf("%d events, problems %v, err %v", len(evs), ps, err)
	}
}

func TestLongLine(t *testing.T) {
	data := `{"run":"r","type":"x","note":"` + strings.Repeat("a", maxLine+10) + "\"}\n" + `{"run":"r","type":"run_end"}` + "\n"
	evs, ps, err := Decode(strings.NewReader(data), "e")
	if err != nil || len(evs) != 1 || len(ps) != 1 || ps[0].Line != 1 {
		t.Fatalf("events %d problems %v err %v", len(evs), ps, err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"run":"r","type":"run_start","phases":["a","b"]}` + "\n" + `{"run":"r","ty`))
	f.Add([]byte("\n\r\n{}\nnull\n[]\n"))
	f.Add([]byte(`{"run":"r","type":"reset","ledger_time":"bad"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, ps, err := Decode(strings.NewReader(string(data)), "f")
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Count(string(data), "\n") + 1
		for _, p := range ps {
			if p.Line < 1 || p.Line > lines {
				t.Fatalf("problem line %d outside 1..%d", p.Line, lines)
			}
		}
		for _, e := range evs {
			if e.Type == "" || e.Line < 1 || e.Line > lines {
				t.Fatalf("bad event %+v", e)
			}
		}
	})
}
