package orchestrate_test

import (
	"context"
	"testing"

	"github.com/baton-dev/baton/internal/mdshapes"
	"github.com/baton-dev/baton/orchestrate"
)

// BenchmarkDryRunShapes runs a dry-run ask over each pathological document
// shape: the structure pass, the retrieval plan and the slices, as baton ask
// --dry-run does. Each should take seconds at most, not minutes.
func BenchmarkDryRunShapes(b *testing.B) {
	for _, s := range mdshapes.All() {
		doc := string(s.Build())
		b.Run(s.Name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for range b.N {
				cfg := orchestrate.Config{Task: "What does the document say about item 42?", Context: doc, DryRun: true}
				if _, err := orchestrate.Ask(context.Background(), cfg); err != nil {
					b.Fatalf("Ask: %v", err)
				}
			}
		})
	}
}
