package main

import (
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

const streamAnswer = "The outage lasted 3 h 42 min; a retry storm exhausted the pool."

// streamPieces is streamAnswer as the fake streams it in the tests below.
var streamPieces = []string{"The outage lasted ", "3 h 42 min; ", "a retry storm ", "exhausted the pool."}

// streamScript is askScript with the synthesis streamed in streamPieces;
// synthesis, when set, answers the synthesis instead.
func streamScript(synthesis func(n int) llmtest.Reply) llmtest.Rule {
	n := 0
	return llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		switch {
		case strings.Contains(r.System, "You are the planner"):
			return llmtest.Text(askPlan)
		case strings.Contains(r.System, "You are the synthesis step"):
			n++
			if synthesis != nil {
				return synthesis(n)
			}
			return llmtest.Reply{Pieces: streamPieces}
		default:
			return llmtest.Text("finding")
		}
	})
}

type streamEvent struct {
	Type           string              `json:"type"`
	ElapsedMS      *int64              `json:"elapsed_ms"`
	Phase          string              `json:"phase"`
	Status         string              `json:"status"`
	Index          *int                `json:"index"`
	Attempt        int                 `json:"attempt"`
	WaitMS         *int64              `json:"wait_ms"`
	Delta          string              `json:"delta"`
	DiscardedChars *int                `json:"discarded_chars"`
	Usage          *json.RawMessage    `json:"usage"`
	Record         *orchestrate.Record `json:"record"`
}

// parseStream checks that every line of out is one JSON object with a type
// and the elapsed time, and that the last is the record.
func parseStream(t *testing.T, out string) []streamEvent {
	t.Helper()
	if !strings.HasSuffix(out, "\n") {
		t.Fatalf("stream-json does not end with a newline: %q", out)
	}
	var evs []streamEvent
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			t.Fatalf("line %d is not a JSON object: %v\n%s", i+1, err, line)
		}
		var e streamEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if e.Type == "" || e.ElapsedMS == nil {
			t.Fatalf("line %d has no type or elapsed_ms: %s", i+1, line)
		}
		evs = append(evs, e)
	}
	last := evs[len(evs)-1]
	if last.Type != "record" || last.Record == nil {
		t.Fatalf("the last line is %q, not the record", last.Type)
	}
	for _, e := range evs[:len(evs)-1] {
		if e.Type == "record" {
			t.Fatal("a record line before the last")
		}
	}
	return evs
}

// streamedText joins the text events after the last restart.
func streamedText(evs []streamEvent) (string, int) {
	var b strings.Builder
	restarts := 0
	for _, e := range evs {
		switch e.Type {
		case "text":
			b.WriteString(e.Delta)
		case "restart":
			restarts++
			b.Reset()
		}
	}
	return b.String(), restarts
}

func TestAskStreamJSON(t *testing.T) {
	isolateEnv(t)
	var retried atomic.Bool
	s := llmtest.NewServer(t,
		// The first sub-agent call is refused once: the run shows a retry.
		llmtest.Rule{Contains: "Your subtask: Explain the retry storm", Times: 1, Replies: []llmtest.Reply{llmtest.RateLimit(20 * time.Millisecond)}},
		streamScript(nil))
	s.OnRequest(func(r llmtest.RecordedRequest) {
		if strings.Contains(r.Messages[len(r.Messages)-1].Content, "Your subtask: Explain the retry storm") {
			retried.Store(true)
		}
	})
	t.Setenv("OPENAI_API_KEY", "k")
	t.Setenv("OPENAI_BASE_URL", s.OpenAIBaseURL())
	code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--output", "stream-json", "--stream", "--no-save",
		"--concurrency", "1", "How long was the outage, why did it happen and what will change?")
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", code, errOut, out)
	}
	evs := parseStream(t, out)
	rec := evs[len(evs)-1].Record
	if rec.Status != "ok" || rec.Answer != streamAnswer || !retried.Load() {
		t.Fatalf("record status %q answer %q", rec.Status, rec.Answer)
	}

	var phases, statuses []string
	usage, retries := 0, 0
	for _, e := range evs {
		switch e.Type {
		case "phase":
			phases = append(phases, e.Phase+" "+e.Status)
		case "subtask":
			if e.Index == nil {
				t.Fatalf("subtask line without index: %+v", e)
			}
			if !slices.Contains(statuses, e.Status) {
				statuses = append(statuses, e.Status)
			}
		case "usage":
			if e.Usage == nil {
				t.Fatal("usage line without usage")
			}
			usage++
		case "retry":
			if e.Attempt != 1 || e.WaitMS == nil || *e.WaitMS < 20 || e.Phase != "dispatch" {
				t.Errorf("retry line %+v", e)
			}
			retries++
		}
	}
	wantPhases := []string{"plan start", "plan end", "assemble start", "assemble end", "dispatch start", "dispatch end", "synthesis start", "synthesis end"}
	if !slices.Equal(phases, wantPhases) {
		t.Errorf("phases %q\nwant %q", phases, wantPhases)
	}
	for _, want := range []string{"self", "queued", "running", "ok"} {
		if !slices.Contains(statuses, want) {
			t.Errorf("no subtask line with status %q (saw %q)", want, statuses)
		}
	}
	// One usage line per call that answered: the refused attempt is a
	// retry of the same call.
	if usage != 4 || retries != 1 {
		t.Errorf("%d usage lines (want 4), %d retry lines (want 1)", usage, retries)
	}
	text, restarts := streamedText(evs)
	if text != streamAnswer || restarts != 0 {
		t.Errorf("text events %q (%d restarts)", text, restarts)
	}
	if strings.Contains(errOut, "attempt 1 failed") {
		t.Error("a retry went to stderr as well as to the stream")
	}
}

// Without --stream, stream-json carries no text: the answer is in the
// record.
func TestAskStreamJSONWithoutStream(t *testing.T) {
	isolateEnv(t)
	s := llmtest.NewServer(t, streamScript(nil))
	t.Setenv("OPENAI_API_KEY", "k")
	t.Setenv("OPENAI_BASE_URL", s.OpenAIBaseURL())
	code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--output", "stream-json", "--no-save", "What happened?")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	evs := parseStream(t, out)
	if text, _ := streamedText(evs); text != "" {
		t.Errorf("text events without --stream: %q", text)
	}
	if evs[len(evs)-1].Record.Answer != streamAnswer {
		t.Errorf("answer %q", evs[len(evs)-1].Record.Answer)
	}
}

// A synthesis stream cut short and retried: stream-json says restart, and
// the text after it is the answer; text output says so on stderr and ends
// with the whole answer, printed once after the cut part.
func TestAskStreamRestart(t *testing.T) {
	synthesis := func(n int) llmtest.Reply {
		if n == 1 {
			return llmtest.CutAfter(3, llmtest.Reply{Pieces: streamPieces})
		}
		return llmtest.Reply{Pieces: streamPieces}
	}
	t.Run("stream-json", func(t *testing.T) {
		isolateEnv(t)
		s := llmtest.NewServer(t, streamScript(synthesis))
		t.Setenv("OPENAI_API_KEY", "k")
		t.Setenv("OPENAI_BASE_URL", s.OpenAIBaseURL())
		code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--output", "stream-json", "--stream", "--no-save", "What happened?")
		if code != exitOK {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		evs := parseStream(t, out)
		text, restarts := streamedText(evs)
		if restarts != 1 || text != streamAnswer {
			t.Fatalf("%d restarts, text after the last %q", restarts, text)
		}
		for _, e := range evs {
			if e.Type == "restart" && (e.DiscardedChars == nil || *e.DiscardedChars == 0) {
				t.Errorf("restart line %+v", e)
			}
		}
	})
	t.Run("text", func(t *testing.T) {
		isolateEnv(t)
		s := llmtest.NewServer(t, streamScript(synthesis))
		t.Setenv("OPENAI_API_KEY", "k")
		t.Setenv("OPENAI_BASE_URL", s.OpenAIBaseURL())
		code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--stream", "--no-save", "What happened?")
		if code != exitOK {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		cut := strings.Join(streamPieces[:2], "")
		if out != cut+"\n"+streamAnswer+"\n" {
			t.Errorf("stdout %q\nwant the cut part, a newline, then the whole answer once", out)
		}
		if !strings.Contains(errOut, "cut off after") || !strings.Contains(errOut, "printed again from the start") {
			t.Errorf("stderr does not say the answer restarted:\n%s", errOut)
		}
	})
}

// --stream in text output prints the answer once; --json keeps stdout one
// JSON document.
func TestAskStreamTextAndJSON(t *testing.T) {
	isolateEnv(t)
	s := llmtest.NewServer(t, streamScript(nil))
	t.Setenv("OPENAI_API_KEY", "k")
	t.Setenv("OPENAI_BASE_URL", s.OpenAIBaseURL())
	code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--stream", "--no-save", "What happened?")
	if code != exitOK || out != streamAnswer+"\n" {
		t.Fatalf("exit %d stdout %q\n%s", code, out, errOut)
	}
	for _, args := range [][]string{{"--json"}, {"--output", "json"}} {
		code, out, errOut = runBaton(t, "", append([]string{"ask", "--doc", exampleDoc, "--stream", "--no-save", "What happened?"}, args...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, errOut)
		}
		if rec := decodeRecord(t, out); rec.Answer != streamAnswer {
			t.Errorf("%v: answer %q", args, rec.Answer)
		}
	}
}

func TestAskOutputFlagErrors(t *testing.T) {
	isolateEnv(t)
	for _, args := range [][]string{
		{"--output", "yaml"},
		{"--json", "--output", "stream-json"},
		{"--json", "--output", "text"},
	} {
		code, out, errOut := runBaton(t, "", append([]string{"ask", "--doc", exampleDoc, "--dry-run", "--no-save", "q"}, args...)...)
		if code != exitUsage || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") > 1 || !strings.Contains(errOut, "--output") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}
