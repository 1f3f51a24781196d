package bench

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/plan"
	"github.com/baton-dev/baton/slice"
	"github.com/baton-dev/baton/tokens"
)

// LoogleEnv names the folder of LooGLE's test data when --loogle is not
// given.
const LoogleEnv = "BATON_LOOGLE"

// loogleFile is LooGLE's short-dependency QA set: one JSON object a line,
// a long document ("input") and its questions ("qa_pairs", each with its
// evidence "S" quoted from the document).
const loogleFile = "shortdep_qa.jsonl"

// LoogleDoc is one document of the set with its questions.
type LoogleDoc struct {
	Title string
	Text  string
	QA    []LoogleQA
}

// LoogleQA is one question and the evidence it was written from.
type LoogleQA struct {
	Q, A, S string
}

// LoadLoogle reads shortdep_qa.jsonl from dir (or dir itself when it is
// that file).
func LoadLoogle(dir string) ([]LoogleDoc, error) {
	path := dir
	if info, err := os.Stat(dir); err == nil && info.IsDir() {
		path = filepath.Join(dir, loogleFile)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("loogle: %w", err)
	}
	defer f.Close()
	var docs []LoogleDoc
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var raw struct {
			Input   string          `json:"input"`
			Title   string          `json:"title"`
			QAPairs json.RawMessage `json:"qa_pairs"`
		}
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			return nil, fmt.Errorf("loogle %s line %d: %w", path, n, err)
		}
		qa, err := decodeQAPairs(raw.QAPairs)
		if err != nil {
			return nil, fmt.Errorf("loogle %s line %d: %w", path, n, err)
		}
		docs = append(docs, LoogleDoc{Title: raw.Title, Text: raw.Input, QA: qa})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("loogle %s: %w", path, err)
	}
	return docs, nil
}

// decodeQAPairs reads qa_pairs as a JSON list of {"Q","A","S"} objects, or
// as the string the set actually holds: the same list written as a Python
// literal.
func decodeQAPairs(raw json.RawMessage) ([]LoogleQA, error) {
	var list []map[string]string
	if err := json.Unmarshal(raw, &list); err != nil {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, errors.New("qa_pairs is neither a list nor a string")
		}
		if list, err = parsePyDicts(s); err != nil {
			return nil, fmt.Errorf("qa_pairs: %w", err)
		}
	}
	out := make([]LoogleQA, len(list))
	for i, m := range list {
		out[i] = LoogleQA{Q: m["Q"], A: m["A"], S: m["S"]}
	}
	return out, nil
}

// LoogleResult is what the benchmark measured over the set.
type LoogleResult struct {
	Docs, Questions, Verbatim int
	// Planner and Baseline count the verbatim questions whose evidence
	// lies whole inside what was sent.
	Planner, Baseline int
	// SentTokens and DocTokens sum, over the verbatim questions, what the
	// planner sent and the document's size.
	SentTokens, DocTokens int
	Fallbacks             int // asks whose slice fell back to the whole document
	Integral              int // evidence lying whole inside one passage
	Passages              int // passages of all documents
	Rows                  [][]string
}

// RunLoogle measures, for each question with verbatim evidence, whether the
// retrieval planner's slices hold the evidence, at what share of the
// document's tokens, beside the plain BM25 baseline at the same budget.
func RunLoogle(docs []LoogleDoc) LoogleResult {
	c := tokens.Default()
	var r LoogleResult
	for _, d := range docs {
		r.Docs++
		doc := slice.ParseString(d.Text)
		spans := doc.PassageSpans()
		r.Passages += len(spans)
		chunks := baselineChunks(d.Text)
		docTokens := c.Count(d.Text)
		var planner, base, verbatim, sent, integral int
		for _, qa := range d.QA {
			r.Questions++
			at := strings.Index(d.Text, strings.TrimSpace(qa.S))
			if qa.S == "" || at < 0 {
				continue
			}
			ev := [2]int{at, at + len(strings.TrimSpace(qa.S))}
			verbatim++
			for _, s := range spans {
				if s[0] <= ev[0] && ev[1] <= s[1] {
					integral++
					break
				}
			}
			got, n, fell := plannerSpans(doc, qa.Q, c)
			if fell {
				r.Fallbacks++
			}
			sent += n
			if covers(d.Text, got, ev) {
				planner++
			}
			if covers(d.Text, baselineSpans(d.Text, chunks, qa.Q, n, c.Count), ev) {
				base++
			}
		}
		r.Verbatim += verbatim
		r.Planner += planner
		r.Baseline += base
		r.Integral += integral
		r.SentTokens += sent
		r.DocTokens += docTokens * verbatim
		share := pct(sent, docTokens*verbatim)
		r.Rows = append(r.Rows, []string{d.Title, itoa(docTokens), itoa(len(spans)), fmt.Sprintf("%d of %d", verbatim, len(d.QA)),
			itoa(planner), itoa(base), share, fmt.Sprintf("%d of %d", integral, verbatim)})
	}
	return r
}

// plannerSpans is what an ask's retrieval planner sends for question q: the
// byte spans its subtasks' slices cut, the tokens sent (a span sent to two
// subtasks counts twice, as it is paid twice) and whether any subtask fell
// back to the whole document.
func plannerSpans(doc *slice.Document, q string, c *tokens.Counter) ([][2]int, int, bool) {
	p := plan.Retrieve(orchestrate.RetrievalInput(doc, q, 0))
	var spans [][2]int
	sent, fell := 0, false
	for _, st := range p.Subtasks {
		if st.NeedsAll() {
			spans = append(spans, [2]int{0, len(doc.Text())})
			sent += c.Count(doc.Text())
			continue
		}
		ptrs := st.ContextPointers
		cut := doc.Extract(slice.Pointers{Sections: ptrs.Sections, LineRanges: ptrs.LineRanges, Passages: ptrs.Passages})
		if cut.Fallback {
			fell = true
		}
		sent += c.Count(cut.Text)
		if cut.Fallback {
			spans = append(spans, [2]int{0, len(doc.Text())})
			continue
		}
		for _, m := range cut.Matched {
			if m.Bytes != nil {
				spans = append(spans, *m.Bytes)
				continue
			}
			spans = append(spans, [2]int{doc.LineStart(m.StartLine), doc.LineStart(m.EndLine + 1)})
		}
	}
	return spans, sent, fell
}

// covers reports whether the spans, joined where only white space lies
// between them, hold ev whole.
func covers(text string, spans [][2]int, ev [2]int) bool {
	s := append([][2]int(nil), spans...)
	sort.Slice(s, func(i, j int) bool { return s[i][0] < s[j][0] })
	var merged [][2]int
	for _, sp := range s {
		if k := len(merged) - 1; k >= 0 && (sp[0] <= merged[k][1] || strings.TrimSpace(text[merged[k][1]:sp[0]]) == "") {
			merged[k][1] = max(merged[k][1], sp[1])
			continue
		}
		merged = append(merged, sp)
	}
	for _, m := range merged {
		if m[0] <= ev[0] && ev[1] <= m[1] {
			return true
		}
	}
	return false
}

// LoogleSection runs the long-document benchmark over the set in dir, or
// says plainly that it was skipped when dir is empty or holds no set.
func LoogleSection(dir string) Section {
	s := Section{Title: "Long documents without headings (LooGLE short-dependency QA)",
		Intro: "The five short-dependency documents of LooGLE (bigai-nlco/LooGLE, MIT): Wikipedia articles flattened to one line with no heading, 11 to 25 questions each, most quoting their evidence verbatim. " +
			"For each question whose evidence occurs verbatim in its document, the retrieval planner plans as `baton ask --planner retrieval` would and the slices its subtasks would be sent are checked for the evidence, whole. " +
			"The baseline is plain BM25 (written apart from baton's planner) over fixed windows of 100 words, taking the best windows while they fit in the tokens the planner sent for that question. " +
			"The data is not part of baton: pass its folder with --loogle DIR or " + LoogleEnv + "."}
	if dir == "" {
		s.Notes = append(s.Notes, "Skipped: no LooGLE folder given (--loogle DIR or "+LoogleEnv+"); nothing was measured.")
		return s
	}
	docs, err := LoadLoogle(dir)
	if err != nil {
		s.Notes = append(s.Notes, fmt.Sprintf("Skipped: %v; nothing was measured.", err))
		return s
	}
	r := RunLoogle(docs)
	s.Tables = append(s.Tables, Table{
		Title:  "Evidence inside what is sent, per document",
		Header: []string{"document", "tokens", "passages", "verbatim questions", "planner holds evidence", "BM25 baseline holds evidence", "planner's share of the document", "evidence inside one passage"},
		Rows:   r.Rows,
	})
	integrity := 0.0
	if r.Verbatim > 0 {
		integrity = float64(r.Integral) / float64(r.Verbatim)
	}
	s.Notes = append(s.Notes, fmt.Sprintf("%d documents, %d questions, %d with verbatim evidence, %d passages; the planner sent %s of the documents' tokens per question on average.",
		r.Docs, r.Questions, r.Verbatim, r.Passages, pct(r.SentTokens, r.DocTokens)))
	s.Targets = append(s.Targets,
		Target{Name: "retrieval planner's evidence recall vs BM25 at the same budget", Want: fmt.Sprintf(">= %d (baseline)", r.Baseline),
			Got: fmt.Sprintf("%d of %d", r.Planner, r.Verbatim), Met: r.Verbatim > 0 && r.Planner >= r.Baseline,
			Why:  fmt.Sprintf("the planner's slices held the evidence of %d questions, the baseline's windows of %d", r.Planner, r.Baseline),
			Fail: "a question whose evidence lies outside the passages the planner picks counts against it; the baseline gets exactly the planner's token budget per question"},
		Target{Name: "asks over LooGLE that fall back to the whole document", Want: "0", Got: itoa(r.Fallbacks), Met: r.Verbatim > 0 && r.Fallbacks == 0,
			Why:  fmt.Sprintf("%d asks matched no passage or section", r.Fallbacks),
			Fail: "a question none of whose words is in the document, or a planner that does not point at passages, falls back"},
		Target{Name: "passage integrity (evidence whole inside one passage)", Want: ">= 80%", Got: pct(r.Integral, r.Verbatim), Met: r.Verbatim > 0 && integrity >= 0.8,
			Why:  fmt.Sprintf("%d of %d evidence quotes are cut by a passage boundary", r.Verbatim-r.Integral, r.Verbatim),
			Fail: "passages cut inside sentences, or too short for a quote of two sentences, split the evidence"},
	)
	return s
}
