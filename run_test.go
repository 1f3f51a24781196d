package baton_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton"
	"github.com/baton-dev/baton/engine"
	"github.com/baton-dev/baton/internal/testws"
	"github.com/baton-dev/baton/llm/llmtest"
)

// finishing is an agent that ends every step at once; the report step
// answers in text.
func finishing() llmtest.Rule {
	return llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		if strings.Contains(r.System, "# Write the report") {
			return llmtest.Text("REPORT: done")
		}
		return llmtest.CallTools(llmtest.Call("finish", `{"summary": "step done"}`))
	})
}

func exampleWorkflow(t *testing.T) string {
	return filepath.Join(testws.Copy(t, "examples/workflow"), "baton.yaml")
}

func TestRunRetriesRateLimitByDefault(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Sequence(llmtest.RateLimit(0)).Limit(1), finishing())
	res, err := baton.Run(context.Background(), baton.RunRequest{Workflow: exampleWorkflow(t), NoHistory: true},
		baton.WithEnv(env(map[string]string{"OPENAI_BASE_URL": srv.OpenAIBaseURL()})))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	// Four steps of one call each, and the 429 before the first.
	if res.Summary != "REPORT: done" || res.Steps != 4 || srv.Count() != 5 {
		t.Fatalf("summary %q, %d steps, %d requests; want the report, 4 steps and 5 requests (the 429 and its retry)", res.Summary, res.Steps, srv.Count())
	}
}

func TestRunReportsRetriesAndStart(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Sequence(llmtest.RateLimit(time.Millisecond)).Limit(1), finishing())
	var retries []int
	var start baton.RunStart
	_, err := baton.Run(context.Background(), baton.RunRequest{Workflow: exampleWorkflow(t), NoHistory: true},
		baton.WithEnv(env(map[string]string{"OPENAI_BASE_URL": srv.OpenAIBaseURL()})),
		baton.WithRunEvents(baton.RunEvents{
			Start: func(s baton.RunStart) { start = s },
			Retry: func(attempt int, _ time.Duration, _ error) { retries = append(retries, attempt) },
		}))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(retries) != 1 || retries[0] != 1 {
		t.Errorf("retries reported %v, want one, of attempt 1", retries)
	}
	if start.Provider != "openai" || start.Resuming || start.AgentCmd != "" {
		t.Errorf("start %+v, want a fresh run on openai without an agent command", start)
	}
}

func TestRunIndexesTheRunAndResumes(t *testing.T) {
	wf := exampleWorkflow(t)
	// The first step's call fails, with no retry: the run stops, resumable.
	srv := llmtest.NewServer(t, llmtest.Sequence(llmtest.Fail(500, "api_error", "down")).Limit(1), finishing())
	opts := []baton.Option{baton.WithEnv(env(map[string]string{"OPENAI_BASE_URL": srv.OpenAIBaseURL()}))}
	var indexed []string
	opts = append(opts, baton.WithRunHistory(func(dir string) error { indexed = append(indexed, dir); return nil }))
	res, err := baton.Run(context.Background(), baton.RunRequest{Workflow: wf, Calls: baton.CallPolicy{MaxAttempts: 1}}, opts...)
	if err == nil || res == nil || res.RunID == "" {
		t.Fatalf("first run: res %+v, err %v; want a run that began and failed", res, err)
	}
	if len(indexed) != 1 || indexed[0] != res.Dir {
		t.Fatalf("indexed %v, want the run's folder %s", indexed, res.Dir)
	}
	if _, err := os.Stat(filepath.Join(res.Dir, "events.jsonl")); err != nil {
		t.Fatalf("the run's log: %v", err)
	}
	var start baton.RunStart
	again, err := baton.Run(context.Background(), baton.RunRequest{Workflow: wf, Resume: true},
		append(opts, baton.WithRunEvents(baton.RunEvents{Start: func(s baton.RunStart) { start = s }}))...)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if !start.Resuming || start.RunID != res.RunID || again.RunID != res.RunID || again.Summary != "REPORT: done" {
		t.Fatalf("resume: start %+v, run %s %q; want run %s resumed to its report", start, again.RunID, again.Summary, res.RunID)
	}
}

func TestRunRefusesBadRequests(t *testing.T) {
	var re *baton.RequestError
	if _, err := baton.Run(context.Background(), baton.RunRequest{Workflow: exampleWorkflow(t), MaxTurns: -1}); !errors.As(err, &re) || re.Field != "max_turns" {
		t.Errorf("MaxTurns -1: %v, want a request error naming max_turns", err)
	}
	agent := "true"
	open := func(context.Context, string, engine.Tasks) (engine.Engine, error) {
		t.Error("the engine was opened for a run of an agent command")
		return nil, errors.New("not opened")
	}
	if _, err := baton.Run(context.Background(), baton.RunRequest{Workflow: exampleWorkflow(t), AgentCmd: &agent, Engine: open, EngineName: "dbos"}); !errors.As(err, &re) || re.Field != "engine" {
		t.Errorf("an engine with an agent command: %v, want a request error naming engine", err)
	}
	_, err := baton.Run(context.Background(), baton.RunRequest{Workflow: filepath.Join(t.TempDir(), "baton.yaml")})
	if !errors.Is(err, baton.ErrNoWorkflow) {
		t.Errorf("a missing workflow file: %v, want ErrNoWorkflow", err)
	}
}
