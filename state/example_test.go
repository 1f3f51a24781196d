package state_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/baton-dev/baton/state"
)

// A skill step ends by handing off to the next one. The user's comment and
// key survive; only the keys baton owns change.
func ExampleUpdate() {
	dir, _ := os.MkdirTemp("", "state-example")
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "state.yaml")
	os.WriteFile(p, []byte("# my project\nowner: 'me'   # quoted on purpose\n"), 0o644)

	next := "review"
	err := state.Update(p, func(f *state.File) error {
		if err := f.SetHandoff(state.HandoffUpdate{NextSkill: &next}); err != nil {
			return err
		}
		return f.RecordStep("epic", "plan", 1500*time.Millisecond, state.Usage{InputTokens: 900, OutputTokens: 120})
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := os.ReadFile(p)
	fmt.Print(string(out))
	// Output:
	// # my project
	// owner: 'me'   # quoted on purpose
	// handoff:
	//   next_skill: review
	//   last_step_completed: plan
	// epic_cycle:
	//   completed_steps:
	//     - plan
	//   current_step: plan
	//   next_skill: review
	// metrics:
	//   skill_timings:
	//     plan:
	//       calls: 1
	//       total_seconds: 1.5
	//       avg_seconds: 1.5
	//       input_tokens: 900
	//       output_tokens: 120
	//       cache_read_input_tokens: 0
	//       cache_creation_input_tokens: 0
}
