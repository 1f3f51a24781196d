package bench

import (
	"context"
	"fmt"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"golang.org/x/sync/errgroup"
)

// plainFanout is what a user would write instead of baton for the same
// fan-out: n calls through the Anthropic SDK with its default HTTP client,
// at most k at a time, each carrying the one section of the fan-out
// document that baton's slice holds, and its subtask, against a fake at latency l started the same way as
// baton's. After one call to open a connection (baton's planner call does
// the same before its dispatch), it returns the wall time from the first
// call to the last reply.
// baton's dispatch is held against this, not only against the ideal.
func plainFanout(ctx context.Context, baton string, n, k int, l time.Duration) (time.Duration, error) {
	fake, err := startFanoutFake(ctx, baton, n, l)
	if err != nil {
		return 0, err
	}
	defer fake.close()
	client := sdk.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(fake.url),
		option.WithAPIKey("bench"), option.WithMaxRetries(0))
	// One call first, as baton's planner call is made before its
	// dispatch: both then start with a connection open.
	if _, err := client.Messages.New(ctx, sdk.MessageNewParams{Model: sdk.Model(ModelName), MaxTokens: 16,
		Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("Your subtask: warm up."))}}); err != nil {
		return 0, fmt.Errorf("plain client's first call: %w", err)
	}
	var g errgroup.Group
	g.SetLimit(k)
	start := time.Now()
	for i := range n {
		part := i%fanoutParts + 1
		section := fmt.Sprintf("## Part %d\n\n%s", part, filler(fmt.Sprintf("part %d", part-1), 120))
		user := fmt.Sprintf("<context>\n%s\n</context>\n\nYour subtask: Extract the facts of part %d, item %d.", section, part, i+1)
		g.Go(func() error {
			_, err := client.Messages.New(ctx, sdk.MessageNewParams{
				Model:     sdk.Model(ModelName),
				MaxTokens: 1024,
				System:    []sdk.TextBlockParam{{Text: "You extract facts from the context you are given."}},
				Messages:  []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock(user))},
			})
			if err != nil {
				return fmt.Errorf("plain client call %d: %w", i+1, err)
			}
			return nil
		})
	}
	err = g.Wait()
	return time.Since(start), err
}

// plainTarget holds baton's dispatch against a plain SDK client making the
// same calls at the same concurrency: baton adds slicing, counting, limits
// and retries, and this says what they cost in wall time.
func plainTarget(worst float64, at string, remote bool) Target {
	t := Target{
		Name: fmt.Sprintf("dispatch within 10%% of a plain SDK client's, L = %s", FanoutLatencies[0]),
		Want: "≤ 1.10",
		Got:  fmt.Sprintf("%.3f (worst, at %s)", worst, at),
		Met:  worst > 0 && worst <= 1.10,
		Fail: "any point where baton's median dispatch exceeds the plain client's median by more than 10%: baton's own CPU per call, or calls it holds back",
	}
	if !remote {
		t.Why = "the fake ran in this process, where its work competes with both clients for the cores"
	}
	return t
}
