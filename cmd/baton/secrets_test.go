package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

// The secrets below reach baton through the environment the way users
// configure gateways; none of them may come out in what baton prints, saves
// or sends in a prompt.
const (
	pathToken  = "t0k3n-abcdef0123456789"
	queryToken = "QSECRET-0123456789abcdef"
	echoedKey  = "sk-ant-KEYSECRET-0123456789"
)

// failingSubtask is the sub-agent request the gateways below break.
const failingSubtask = "Your subtask: Explain the retry storm"

// writeProviderError answers with the provider's own error shape, so the
// SDKs parse the message out of it.
func writeProviderError(w http.ResponseWriter, anthropic bool, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body := map[string]any{"error": map[string]any{"type": typ, "message": msg}}
	if anthropic {
		body["type"] = "error"
	}
	_ = json.NewEncoder(w).Encode(body)
}

// setup is a gateway in front of the fake, the environment that reaches
// it, and the secret that must not leak.
type setup struct {
	env    map[string]string
	secret string
	gw     *llmtest.Gateway
}

func TestAskNeverLeaksGatewaySecrets(t *testing.T) {
	cases := []struct {
		name string
		make func(t *testing.T, s *llmtest.Server, anthropic bool) setup
	}{
		{"path token, connection reset", func(t *testing.T, s *llmtest.Server, anthropic bool) setup {
			gw := llmtest.NewGateway(t, s, "/"+pathToken)
			gw.Intercept(func(w http.ResponseWriter, _ *http.Request, body []byte) bool {
				return strings.Contains(string(body), failingSubtask) && llmtest.ResetConnection(w)
			})
			return setup{env: baseEnv(anthropic, gw.URL()+"/"+pathToken, "", "sk-test-plain-key"), secret: pathToken, gw: gw}
		}},
		{"query token, error quoting the URL", func(t *testing.T, s *llmtest.Server, anthropic bool) setup {
			gw := llmtest.NewGateway(t, s, "")
			gw.Intercept(func(w http.ResponseWriter, r *http.Request, body []byte) bool {
				switch {
				case r.URL.Query().Get("key") != queryToken:
					writeProviderError(w, anthropic, http.StatusForbidden, "permission_error", "the gateway wants ?key=")
					return true
				case strings.Contains(string(body), failingSubtask):
					writeProviderError(w, anthropic, http.StatusBadRequest, "invalid_request_error", "no route for "+r.URL.RequestURI())
					return true
				}
				return false
			})
			return setup{env: baseEnv(anthropic, gw.URL(), "?key="+queryToken, "sk-test-plain-key"), secret: queryToken, gw: gw}
		}},
		{"API key echoed in an error body", func(t *testing.T, s *llmtest.Server, anthropic bool) setup {
			gw := llmtest.NewGateway(t, s, "")
			gw.Intercept(func(w http.ResponseWriter, r *http.Request, body []byte) bool {
				if !strings.Contains(string(body), failingSubtask) {
					return false
				}
				key := r.Header.Get("x-api-key") + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
				writeProviderError(w, anthropic, http.StatusUnauthorized, "authentication_error", "invalid x-api-key: "+key)
				return true
			})
			return setup{env: baseEnv(anthropic, gw.URL(), "", echoedKey), secret: echoedKey, gw: gw}
		}},
	}
	for _, tc := range cases {
		for _, p := range []string{"anthropic", "openai"} {
			t.Run(tc.name+"/"+p, func(t *testing.T) {
				isolateEnv(t)
				s := llmtest.NewServer(t, askScript())
				st := tc.make(t, s, p == "anthropic")
				askThroughGateway(t, st)
			})
		}
	}
}

// askThroughGateway runs an ask through the gateway with one failing
// subtask, and checks that the secret is in no output, record or request.
func askThroughGateway(t *testing.T, st setup) {
	t.Helper()
	for k, v := range st.env {
		t.Setenv(k, v)
	}
	runs := t.TempDir()
	code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--json", "--max-attempts", "2", "--runs-dir", runs, "How long was the outage and why?")
	seen := st.gw.Seen()
	if len(seen) == 0 {
		t.Fatalf("nothing reached the gateway; exit %d\nstderr: %s", code, errOut)
	}
	for _, r := range seen {
		if st.secret == queryToken && !strings.Contains(r.RawQuery, "key="+queryToken) {
			t.Errorf("request to %s arrived without the base URL's query string (got %q)", r.Path, r.RawQuery)
		}
	}
	if code != exitPartial {
		t.Fatalf("exit %d, want %d (partial)\nstderr: %s", code, exitPartial, errOut)
	}
	rec := decodeRecord(t, out)
	if rec.Subtasks[1].Status != orchestrate.StatusFailed {
		t.Fatalf("subtask 2 = %+v, want failed", rec.Subtasks[1])
	}
	synth := ""
	for _, r := range seen {
		if strings.Contains(r.Body, "You are the synthesis step") {
			synth = r.Body
		}
	}
	if !strings.Contains(synth, "FAILED") {
		t.Fatalf("the synthesis prompt does not quote the failure:\n%s", synth)
	}
	files, _ := filepath.Glob(filepath.Join(runs, "*.json"))
	if len(files) != 1 {
		t.Fatalf("saved records: %v", files)
	}
	saved, _ := os.ReadFile(files[0])
	where := map[string]string{"stdout": out, "stderr": errOut, "the saved record": string(saved)}
	for i, r := range seen {
		where["request body "+string(rune('a'+i))] = r.Body
	}
	for name, text := range where {
		if i := strings.Index(text, st.secret); i >= 0 {
			t.Errorf("%s holds the secret: …%s…", name, text[max(0, i-120):min(len(text), i+len(st.secret)+40)])
		}
	}
	t.Logf("subtask error as recorded: %s", rec.Subtasks[1].Error)
}

// baseEnv configures one provider at root (plus /v1 for OpenAI) with a
// query string and a key.
func baseEnv(anthropic bool, root, query, key string) map[string]string {
	if anthropic {
		return map[string]string{"ANTHROPIC_API_KEY": key, "ANTHROPIC_BASE_URL": root + query}
	}
	return map[string]string{"OPENAI_API_KEY": key, "OPENAI_BASE_URL": root + "/v1" + query}
}

func TestAskBadBaseURLHidesCredentials(t *testing.T) {
	const key = "sk-ant-SECRET-98765"
	bad := "https://user:" + key + "@host:99999x/"
	cases := []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"ANTHROPIC_BASE_URL", map[string]string{"ANTHROPIC_API_KEY": "sk-other-0000", "ANTHROPIC_BASE_URL": bad}, nil},
		{"OPENAI_BASE_URL", map[string]string{"OPENAI_BASE_URL": bad}, nil},
		{"--base-url", nil, []string{"--base-url", bad}},
		{"OLLAMA_HOST", map[string]string{"OLLAMA_HOST": "user:" + key + "@host:99999x"}, []string{"--provider", "ollama"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			isolateEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			args := append([]string{"ask", "--doc", exampleDoc, "--no-save"}, tc.args...)
			code, out, errOut := runBaton(t, "", append(args, "task")...)
			if code != exitError {
				t.Errorf("exit %d, want %d\nstderr: %s", code, exitError, errOut)
			}
			if strings.Contains(errOut, key) || strings.Contains(out, key) {
				t.Errorf("the credential is printed:\n%s%s", out, errOut)
			}
			if strings.Count(strings.TrimSpace(errOut), "\n") > 0 || !strings.Contains(errOut, "host") {
				t.Errorf("want one line naming the host, got %q", errOut)
			}
		})
	}
}
