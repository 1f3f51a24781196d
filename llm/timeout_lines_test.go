package llm

import "testing"

// The idle timer restarts on bytes of data: and event: lines only, however
// the lines are split across reads.
func TestSSELinesContent(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   []bool
	}{
		{"ping comments", []string{": ping\n\n", ":\n", "\n\n"}, []bool{false, false, false}},
		{"event and data", []string{"event: x\n", "data: {}\n\n"}, []bool{true, true}},
		{"field name split", []string{"da", "ta: {}\n\n"}, []bool{false, true}},
		{"comment split", []string{":", " ping\n"}, []bool{false, false}},
		{"data line dribbled", []string{"data: {\"a\"", ":1", "}\n\n"}, []bool{true, true, true}},
		{"bare data field", []string{"data", "\n\n"}, []bool{false, true}},
		{"other fields", []string{"id: 7\nretry: 10\n\n"}, []bool{false}},
		{"long unknown field", []string{"dataset: x\n"}, []bool{false}},
		{"crlf", []string{": ping\r\n", "data: x\r\n\r\n"}, []bool{false, true}},
		{"ping then data in one read", []string{": ping\n\ndata: x\n\n"}, []bool{true}},
	}
	for _, tt := range tests {
		var s sseLines
		for i, c := range tt.chunks {
			if got := s.content([]byte(c)); got != tt.want[i] {
				t.Errorf("%s: chunk %d %q: content %v, want %v", tt.name, i, c, got, tt.want[i])
			}
		}
	}
}
