package orchestrate_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/llm/openai"
	"github.com/baton-dev/baton/orchestrate"
)

// TestAskMasksURLSecretsInErrors gives Ask a bare adapter, not one wrapped
// by the provider package, whose base URL carries a gateway token in its
// path. A sub-agent's connection is reset, so its error quotes the URL; the
// token must reach neither the record nor the synthesis prompt, and a
// secret handed over in Config.Redactor is masked as well.
func TestAskMasksURLSecretsInErrors(t *testing.T) {
	const token = "gw-T0KEN-5f3a9c0d2e"
	const other = "another-secret-77aa"
	s := llmtest.NewServer(t, script(llmtest.Text(planJSON)))
	gw := llmtest.NewGateway(t, s, "/"+token)
	gw.Intercept(func(w http.ResponseWriter, _ *http.Request, body []byte) bool {
		switch {
		case strings.Contains(string(body), "Your subtask: Summarise the cost picture"):
			return llmtest.ResetConnection(w)
		case strings.Contains(string(body), "Your subtask: Explain what drove revenue"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"type": "invalid_request_error", "message": "quota of " + other + " used up"}})
			return true
		}
		return false
	})
	m, err := openai.New(openai.Config{APIKey: "test-key", BaseURL: gw.URL() + "/" + token + "/v1", Model: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config(llm.WithRetry(m, llm.RetryPolicy{MaxAttempts: 1}))
	// Two delegated subtasks fail; one self-answer is left to synthesise.
	cfg.Redactor = llm.NewRedactor(other)
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if !errors.Is(err, orchestrate.ErrPartial) {
		t.Fatalf("err = %v, want ErrPartial", err)
	}
	if rec.Subtasks[2].Status != orchestrate.StatusFailed || !strings.Contains(rec.Subtasks[2].Error, "/v1/chat/completions") {
		t.Fatalf("reset subtask = %+v; want a failure quoting the URL", rec.Subtasks[2])
	}
	data, _ := json.Marshal(rec)
	where := map[string]string{"record": string(data)}
	synth := ""
	for _, r := range gw.Seen() {
		if strings.Contains(r.Body, "You are the synthesis step") {
			synth = r.Body
		}
	}
	if !strings.Contains(synth, "FAILED") {
		t.Fatalf("synthesis prompt does not quote the failures:\n%s", synth)
	}
	where["synthesis prompt"] = synth
	for name, text := range where {
		for _, sec := range []string{token, other} {
			if i := strings.Index(text, sec); i >= 0 {
				t.Errorf("%s holds %q: …%s…", name, sec, text[max(0, i-100):min(len(text), i+len(sec)+20)])
			}
		}
	}
}

// TestAskMasksTheReturnedError checks the error Ask returns and the one it
// records: the run fails in the planner with a transport error quoting a
// URL with user information and a query token; errors.Is still sees the
// cause.
func TestAskMasksTheReturnedError(t *testing.T) {
	m := failing{err: &llm.ProviderError{Provider: "openai", Message: `Post "https://bob:pw-9a8b7c@gw.example/v1/chat?key=QK-55aa66bb": dial tcp: connection refused`, Err: context.DeadlineExceeded}}
	cfg := config(m)
	rec, err := orchestrate.Ask(context.Background(), cfg)
	if err == nil {
		t.Fatal("Ask succeeded")
	}
	var pe *llm.ProviderError
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &pe) {
		t.Errorf("masked error %v lost its chain", err)
	}
	for _, text := range []string{err.Error(), rec.Error, pe.Error()} {
		for _, sec := range []string{"pw-9a8b7c", "QK-55aa66bb", "bob"} {
			if strings.Contains(text, sec) {
				t.Errorf("%q holds %q", text, sec)
			}
		}
	}
	if !strings.Contains(rec.Error, "gw.example") {
		t.Errorf("the record no longer says where the call went: %q", rec.Error)
	}
}

type failing struct{ err error }

func (f failing) Generate(context.Context, *llm.Request) (*llm.Response, error) {
	time.Sleep(time.Millisecond)
	return nil, f.err
}
