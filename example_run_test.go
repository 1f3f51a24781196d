package baton_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/baton-dev/baton"
	"github.com/baton-dev/baton/llm/llmtest"
)

// Run a skill workflow: here the shipped example (three phases and four
// skill steps, each in a fresh context) in a copy of its folder, against
// a fake OpenAI endpoint reached through the environment. The fake agent
// ends every step at once; the report step answers in text, which is the
// run's summary.
func ExampleRun() {
	srv := llmtest.New(llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		if strings.Contains(r.System, "# Write the report") {
			return llmtest.Text("REPORT: the --shout flag is in.")
		}
		return llmtest.CallTools(llmtest.Call("finish", `{"summary": "step done"}`))
	}))
	defer srv.Close()
	env := map[string]string{"OPENAI_BASE_URL": srv.OpenAIBaseURL()}

	dir, err := os.MkdirTemp("", "baton-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.CopyFS(dir, os.DirFS("examples/workflow")); err != nil {
		log.Fatal(err)
	}

	res, err := baton.Run(context.Background(), baton.RunRequest{
		Workflow:  filepath.Join(dir, "baton.yaml"),
		NoHistory: true, // the run is not added to the user's run history
	}, baton.WithEnv(func(k string) string { return env[k] }))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Steps, "steps,", res.Resets, "resets")
	fmt.Println(res.Summary)
	_, err = os.Stat(filepath.Join(res.Dir, "events.jsonl"))
	fmt.Println("run log written:", err == nil)
	// Output:
	// 4 steps, 0 resets
	// REPORT: the --shout flag is in.
	// run log written: true
}
