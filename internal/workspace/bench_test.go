package workspace

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkDeepPath is write_file and read_file on paths of "d/" × n
// then a file name: under the depth limit, at it (n = 63) and past it, as
// a hostile model sends them. Run with
//
//	go test ./internal/workspace -run '^$' -bench DeepPath -benchtime 20x
func BenchmarkDeepPath(b *testing.B) {
	for _, n := range []int{16, 63, 1000, 3000} {
		rel := strings.Repeat("d/", n) + "x.md"
		for _, op := range []string{"write", "read"} {
			b.Run(fmt.Sprintf("%s/dirs=%d", op, n), func(b *testing.B) {
				ws, err := New(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				defer ws.Close()
				ws.WriteFile(rel, []byte("x\n"))
				b.ReportAllocs()
				for b.Loop() {
					if op == "write" {
						ws.WriteFile(rel, []byte("x\n"))
					} else {
						ws.ReadFile(rel, 0)
					}
				}
			})
		}
	}
}
