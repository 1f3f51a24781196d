package slice

import (
	"testing"

	"github.com/baton-dev/baton/internal/mdshapes"
)

// BenchmarkParseShapes parses each pathological document shape: the
// structure pass alone, which must stay linear in the document's size.
func BenchmarkParseShapes(b *testing.B) {
	for _, s := range mdshapes.All() {
		doc := string(s.Build())
		b.Run(s.Name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for range b.N {
				ParseString(doc)
			}
		})
	}
}
