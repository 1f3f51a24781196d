package recordcmp

import (
	"reflect"
	"testing"
)

// Two records that differ only in ID, times and the order calls finished
// compare equal; a difference in a call's tokens does not.
func TestComparable(t *testing.T) {
	a := `{"id":"r1","started_at":"x","calls":[{"phase":"subagent","subtask":10,"start_ms":5,"prompt_tokens":3},{"phase":"subagent","subtask":2,"prompt_tokens":4},{"phase":"planner","subtask":-1}]}`
	b := `{"id":"r2","started_at":"y","calls":[{"phase":"planner","subtask":-1},{"phase":"subagent","subtask":2,"prompt_tokens":4},{"phase":"subagent","subtask":10,"start_ms":9,"prompt_tokens":3}]}`
	c := `{"id":"r3","calls":[{"phase":"planner","subtask":-1},{"phase":"subagent","subtask":2,"prompt_tokens":5},{"phase":"subagent","subtask":10,"prompt_tokens":3}]}`
	va, err := Comparable([]byte(a))
	if err != nil {
		t.Fatal(err)
	}
	vb, _ := Comparable([]byte(b))
	vc, _ := Comparable([]byte(c))
	if !reflect.DeepEqual(va, vb) {
		t.Errorf("records differing only in ID, times and call order compare unequal:\n%v\n%v", va, vb)
	}
	if reflect.DeepEqual(va, vc) {
		t.Errorf("records differing in a call's tokens compare equal")
	}
	calls := va.(map[string]any)["calls"].([]any)
	if got := calls[1].(map[string]any)["subtask"]; got != 2.0 {
		t.Errorf("second call is subtask %v, want 2 (sorted as numbers, not strings)", got)
	}
	if _, err := Comparable([]byte("{")); err == nil {
		t.Error("broken JSON accepted")
	}
}
