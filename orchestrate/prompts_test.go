package orchestrate

import (
	"os"
	"strings"
	"testing"

	"github.com/baton-dev/baton/plan"
	"github.com/baton-dev/baton/tokens"
)

// Accounting counts a sub-agent message as block + instruction. That is
// exact only if the tokenizer never merges across the seam; check it on
// real documents and on awkward endings.
func TestMessageCountIsSumOfParts(t *testing.T) {
	var contexts []string
	for _, f := range []string{"../examples/incident-report.md", "../examples/design-spec.md"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		contexts = append(contexts, string(data))
	}
	contexts = append(contexts, "", "no newline at end", "trailing spaces   \n\n\n", "ends in a tab\t", "unicode — ends here…", "  \n  ")
	tasks := []string{"Compare A and B", "  leading spaces", "\nnewline first", "ünïcode"}
	for _, enc := range []tokens.Encoding{tokens.O200kBase, tokens.Cl100kBase} {
		c, err := tokens.New(enc)
		if err != nil {
			t.Fatal(err)
		}
		for _, ctx := range contexts {
			for _, task := range tasks {
				st := plan.Subtask{Task: task}
				whole := c.Count(subagentUser(task, st, ctx, "a hint"))
				parts := c.Count(contextBlock(ctx)) + c.Count(subagentInstruction(task, st, "a hint"))
				if whole != parts {
					t.Errorf("%s: context %q… task %q: whole %d != parts %d", enc, clip(ctx), task, whole, parts)
				}
			}
		}
	}
}

func clip(s string) string {
	if len(s) > 20 {
		return s[:20]
	}
	return strings.ReplaceAll(s, "\n", `\n`)
}
