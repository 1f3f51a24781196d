package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/baton-dev/baton/internal/bench"
)

func init() { register(newBenchFakeCmd) }

// newBenchFakeCmd is the hidden command `baton bench` starts to serve its
// fake provider from another process: measured in-process, the fake's own
// parsing and counting would be charged to baton.
func newBenchFakeCmd() *cobra.Command {
	var n int
	var latency time.Duration
	cmd := &cobra.Command{
		Use:    bench.FakeCommand,
		Short:  "Serve the fan-out benchmark's fake provider until standard input closes",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bench.ServeFanoutFake(n, latency, cmd.InOrStdin(), cmd.OutOrStdout()); err != nil {
				return withCode(exitError, err)
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&n, "subtasks", 1, "subtasks in the planner's scripted reply")
	cmd.Flags().DurationVar(&latency, "latency", 0, "how long the fake holds every reply back")
	return cmd
}
