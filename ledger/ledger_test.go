package ledger

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

var t0 = time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)

var ignorePos = cmpopts.IgnoreFields(Entry{}, "Path", "Line")

func fullEntry() Entry {
	return Entry{
		Phase:           "implement",
		Time:            t0,
		FrozenDecisions: []string{"Run log is JSON Lines, one event per line.", "Ledger times are written to the second."},
		DoneSoFar: []Item{
			{Text: "Parser for the ledger", Evidence: "ledger/parse.go:40"},
			{Text: "Tests pass", Evidence: "`go test ./ledger/`"},
		},
		Artifacts:    []string{"ledger/ledger.go", "runlog/runlog.go"},
		CurrentPhase: "implement",
		NextStep:     "Write the lint rules for resets.",
		OpenTickets:  nil,
	}
}

func TestRenderGolden(t *testing.T) {
	got := Render(fullEntry())
	golden := filepath.Join("testdata", "entry.golden.md")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("Render (-golden +got):\n%s", d)
	}
}

func TestRenderParseRoundTrip(t *testing.T) {
	multi := fullEntry()
	multi.FrozenDecisions = []string{"first line\ncontinued here"}
	multi.NextStep = "Two lines\nof next step."
	multi.OpenTickets = []string{"miss: threshold crossed mid-phase in implement"}
	for name, e := range map[string]Entry{"full": fullEntry(), "multi-line": multi} {
		t.Run(name, func(t *testing.T) {
			got, problems, err := Parse(Render(e), "l.md")
			if err != nil || len(problems) > 0 || len(got) != 1 {
				t.Fatalf("Parse: %v %v %d entries", err, problems, len(got))
			}
			if d := cmp.Diff(e, got[0], ignorePos, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("round trip (-want +got):\n%s", d)
			}
			if got[0].Line != 1 || got[0].Path != "l.md" {
				t.Errorf("position %s:%d", got[0].Path, got[0].Line)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*Entry)
		missing []string
	}{
		{"complete", func(*Entry) {}, nil},
		{"empty lists are fine", func(e *Entry) { e.FrozenDecisions, e.DoneSoFar, e.Artifacts = nil, nil, nil }, nil},
		{"no next step", func(e *Entry) { e.NextStep = " " }, []string{FieldNextStep}},
		{"next step none", func(e *Entry) { e.NextStep = "None" }, []string{FieldNextStep}},
		{"no current phase", func(e *Entry) { e.CurrentPhase = "" }, []string{FieldCurrentPhase}},
		{"done item without evidence", func(e *Entry) { e.DoneSoFar[1].Evidence = "" }, []string{"evidence for Done so far item 2 (Tests pass)"}},
		{"absent field", func(e *Entry) { e.Absent = []string{FieldArtifacts} }, []string{FieldArtifacts}},
		{"no heading time or phase", func(e *Entry) { e.Time, e.Phase = time.Time{}, "" }, []string{"phase in the heading", "time in the heading"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := fullEntry()
			tt.edit(&e)
			err := e.Validate()
			if tt.missing == nil {
				if err != nil {
					t.Fatalf("Validate = %v", err)
				}
				return
			}
			var ie *IncompleteError
			if !errors.As(err, &ie) || !errors.Is(err, ErrIncomplete) {
				t.Fatalf("Validate = %v, want *IncompleteError wrapping ErrIncomplete", err)
			}
			if d := cmp.Diff(tt.missing, ie.Missing); d != "" {
				t.Errorf("missing (-want +got):\n%s", d)
			}
		})
	}
}

func TestParse(t *testing.T) {
	const body = "\n### Frozen decisions\nnone\n\n### Done so far\n- a — evidence: x.go:1\n\n### Artifacts\n- out.md\n\n### Current phase\nverify\n\n### Next concrete step\nship\n\n### Open tickets / misses\n- none\n"
	tests := []struct {
		name     string
		data     string
		entries  int
		complete []bool
		absent   [][]string
		probs    []int // problem lines
	}{
		{"empty", "", 0, nil, nil, nil},
		{"prose only", "# Notes\n\nSome text.\n## Ledger\nthe title heading is not an entry\n", 0, nil, nil, nil},
		{"one entry amid prose", "# Project ledger\n\nIntro.\n\n## Ledger — verify — 2026-11-30T07:00:00Z\n" + body + "\n## Appendix\n### Artifacts\n- not part of the entry\n", 1, []bool{true}, [][]string{nil}, nil},
		{"crlf", strings.ReplaceAll("## Ledger — verify — 2026-11-30T07:00:00+01:00\n"+body, "\n", "\r\n"), 1, []bool{true}, [][]string{nil}, nil},
		{"en dashes and hyphens accepted", "## Ledger – verify - 2026-11-30T07:00:00Z\n" + body, 1, []bool{true}, [][]string{nil}, nil},
		{"heading inside code fence is not an entry", "```\n## Ledger — x — 2026-11-30T07:00:00Z\n```\n", 0, nil, nil, nil},
		{"bad time", "## Ledger — verify — yesterday\n" + body, 0, nil, nil, []int{1}},
		{"bad heading shape", "text\n## Ledger — verify\n" + body, 0, nil, nil, []int{2}},
		{"missing fields", "## Ledger — verify — 2026-11-30T07:00:00Z\n### Current phase\nverify\n### Next concrete step\nship\n", 1, []bool{false}, [][]string{{FieldFrozenDecisions, FieldDoneSoFar, FieldArtifacts, FieldOpenTickets}}, nil},
		{"duplicate field and stray text", "## Ledger — verify — 2026-11-30T07:00:00Z\n" + body + "### Artifacts\n- again\n", 1, []bool{true}, [][]string{nil}, []int{20}},
		{"text in a list field", "## Ledger — verify — 2026-11-30T07:00:00Z\n### Artifacts\nout.md\n", 1, []bool{false}, [][]string{{FieldFrozenDecisions, FieldDoneSoFar, FieldCurrentPhase, FieldNextStep, FieldOpenTickets}}, []int{3}},
		{"two entries, unknown subsection skipped", "## Ledger — a — 2026-11-30T07:00:00Z\n" + body + "### My notes\n- whatever\n## Ledger — b — 2026-11-30T08:00:00Z\n" + body, 2, []bool{true, true}, [][]string{nil, nil}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es, ps, err := Parse([]byte(tt.data), "l.md")
			if err != nil {
				t.Fatal(err)
			}
			if len(es) != tt.entries {
				t.Fatalf("%d entries, want %d", len(es), tt.entries)
			}
			var complete []bool
			var absent [][]string
			for _, e := range es {
				complete = append(complete, e.Complete())
				absent = append(absent, e.Absent)
			}
			if d := cmp.Diff(tt.complete, complete); d != "" {
				t.Errorf("complete (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.absent, absent); d != "" {
				t.Errorf("absent (-want +got):\n%s", d)
			}
			var lines []int
			for _, p := range ps {
				lines = append(lines, p.Line)
			}
			if d := cmp.Diff(tt.probs, lines); d != "" {
				t.Errorf("problem lines (-want +got):\n%s  problems: %v", d, ps)
			}
		})
	}
}

func TestParseFields(t *testing.T) {
	data := "## Ledger — verify — 2026-11-30T07:00:00Z\n### Frozen decisions:\n* keep\n  going\n### Done so far\n- wrote it — evidence: a.go:3\n- ran — Evidence: `make test`\n- no proof\n### artifacts\nnone\n### Current phase\nverify\n### Next concrete step\nShip it.\n#### not a field\n### Open tickets / misses\n- t1\n"
	es, ps, err := Parse([]byte(data), "l.md")
	if err != nil || len(ps) > 0 || len(es) != 1 {
		t.Fatalf("%v %v %d", err, ps, len(es))
	}
	want := Entry{
		Phase: "verify", Time: t0, FrozenDecisions: []string{"keep\ngoing"},
		DoneSoFar:    []Item{{"wrote it", "a.go:3"}, {"ran", "`make test`"}, {"no proof", ""}},
		CurrentPhase: "verify", NextStep: "Ship it.\n#### not a field", OpenTickets: []string{"t1"},
	}
	if d := cmp.Diff(want, es[0], ignorePos); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestParseNotText(t *testing.T) {
	for _, data := range []string{"\xff\xfe", "a\x00b"} {
		if _, _, err := Parse([]byte(data), "l.md"); !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) err = %v, want ErrMalformed", data, err)
		}
	}
}

func TestAppend(t *testing.T) {
	tests := []struct {
		name, old string
		sep       string // what must sit between old content and the entry
	}{
		{"new file", "", ""},
		{"ends with newline", "# Ledger\n", "\n"},
		{"no final newline", "# Ledger\n\nprose", "\n\n"},
		{"blank line already", "# Ledger\n\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "specs", "ledger.md")
			if tt.old != "" {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, []byte(tt.old), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			e := fullEntry()
			if err := Append(path, e); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if want := tt.old + tt.sep + string(Render(e)); string(got) != want {
				t.Fatalf("file =\n%q\nwant\n%q", got, want)
			}
			if tt.old != "" {
				if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
					t.Errorf("mode %v, want the old 0600 kept", st.Mode().Perm())
				}
			}
			e2 := fullEntry()
			e2.Phase, e2.Time = "verify", t0.Add(time.Hour)
			if err := Append(path, e2); err != nil {
				t.Fatal(err)
			}
			es, ps, err := Read(path)
			if err != nil || len(ps) > 0 || len(es) != 2 {
				t.Fatalf("read back: %v %v %d", err, ps, len(es))
			}
			latest, err := Latest(path)
			if err != nil || latest.Phase != "verify" {
				t.Fatalf("Latest = %+v, %v", latest, err)
			}
		})
	}
}

func TestAppendRefuses(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Entry)
		is   error
	}{
		{"incomplete", func(e *Entry) { e.NextStep = "" }, ErrIncomplete},
		{"no evidence", func(e *Entry) { e.DoneSoFar[0].Evidence = "" }, ErrIncomplete},
		{"heading inside a field", func(e *Entry) { e.NextStep = "do this\n## Ledger — x — 2026-11-30T07:00:00Z" }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ledger.md")
			const old = "# keep me\n"
			os.WriteFile(path, []byte(old), 0o644)
			e := fullEntry()
			tt.edit(&e)
			err := Append(path, e)
			if err == nil || tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("Append err = %v, want %v", err, tt.is)
			}
			if got, _ := os.ReadFile(path); string(got) != old {
				t.Fatalf("ledger changed to %q", got)
			}
		})
	}
}

func TestLatest(t *testing.T) {
	dir := t.TempDir()
	e1 := fullEntry()
	e2 := fullEntry()
	e2.Phase, e2.Time = "verify", t0.Add(2*time.Hour)
	inc := "## Ledger — report — 2026-11-30T12:00:00Z\n### Current phase\nreport\n"
	data := string(Render(e2)) + "\n" + string(Render(e1)) + "\n" + inc
	path := filepath.Join(dir, "l.md")
	os.WriteFile(path, []byte(data), 0o644)
	got, err := Latest(path)
	if err != nil || got.Phase != "verify" {
		t.Fatalf("Latest = %+v, %v; want the newest complete entry, not the last in the file or the incomplete one", got, err)
	}
	empty := filepath.Join(dir, "empty.md")
	os.WriteFile(empty, []byte(inc), 0o644)
	if _, err := Latest(empty); !errors.Is(err, ErrNoEntry) {
		t.Errorf("Latest(only incomplete) err = %v, want ErrNoEntry", err)
	}
	if _, err := Latest(filepath.Join(dir, "missing.md")); err == nil || errors.Is(err, ErrNoEntry) {
		t.Errorf("Latest(missing file) err = %v, want a read error", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(string(Render(fullEntry())))
	f.Add("## Ledger — a — 2026-11-30T07:00:00Z\n### Done so far\n- x — evidence:\n```\n## Ledger — b — x\n")
	f.Add("## Ledger -- a -- 2026-11-30T07:00:00.5+02:00\r\n### Artifacts\r\n  cont\r\n- \r\n")
	f.Fuzz(func(t *testing.T, data string) {
		es, ps, err := Parse([]byte(data), "f.md")
		if err != nil {
			return
		}
		lines := strings.Count(data, "\n") + 1
		for _, p := range ps {
			if p.Line < 1 || p.Line > lines || p.Msg == "" {
				t.Fatalf("bad problem %+v", p)
			}
		}
		for _, e := range es {
			if e.Line < 1 || e.Line > lines {
				t.Fatalf("entry line %d outside 1..%d", e.Line, lines)
			}
			_ = e.Validate()
			// A complete entry renders to text that reads back complete.
			if e.Complete() {
				back, _, err := Parse(Render(e), "r.md")
				if err != nil || len(back) < 1 || !back[0].Complete() {
					t.Fatalf("complete entry %+v did not survive Render/Parse", e)
				}
			}
		}
	})
}

// Appends racing from several goroutines must all land: none may read the
// old ledger while another is between its read and its rename.
func TestAppendConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.md")
	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := fullEntry()
			e.Time = t0.Add(time.Duration(i) * time.Minute)
			if err := Append(path, e); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	es, ps, err := Read(path)
	if err != nil || len(ps) > 0 || len(es) != n {
		t.Fatalf("%d entries, want %d (problems %v, err %v)", len(es), n, ps, err)
	}
}
